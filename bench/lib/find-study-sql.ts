import {
  type CompiledQuery,
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
} from 'kysely';
import type { DB } from '../../src/db/schema.js';
import { findStudy } from '../../src/families/studies/queries.js';

const WORKSPACE_MARK = '\u0001workspace';
const STUDY_MARK = '\u0001study';

/**
 * The statement findStudy sends, captured by running findStudy itself on a Kysely instance
 * whose driver executes nothing: the floor then sends exactly the same SQL text, with the
 * parameters bound to its own values.
 */
export async function captureFindStudy(withScreener: boolean): Promise<(workspaceId: string, studyId: string) => CompiledQuery> {
  let captured: CompiledQuery | undefined;
  const capture = new Kysely<DB>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
    log: (event) => {
      if (captured) throw new Error('findStudy sent more than one statement; the floor assumes a single lookup');
      captured = event.query;
    },
  });
  await findStudy(capture, WORKSPACE_MARK, STUDY_MARK, withScreener);
  await capture.destroy();
  if (!captured) throw new Error('findStudy sent no statement');
  const template = captured;
  const slots = template.parameters.map((value) => (value === WORKSPACE_MARK ? 'workspace' : value === STUDY_MARK ? 'study' : 'fixed'));
  return (workspaceId, studyId) => ({
    ...template,
    parameters: template.parameters.map((value, index) => (slots[index] === 'workspace' ? workspaceId : slots[index] === 'study' ? studyId : value)),
  });
}

import type { Insertable, Kysely, Selectable } from 'kysely';
import type { ConsentFormsTable, ConsentFormVersionsTable, DB } from '../../db/schema.js';

type Executor = Kysely<DB>;

export type ConsentFormRow = Selectable<ConsentFormsTable>;
export type ConsentFormVersionRow = Selectable<ConsentFormVersionsTable>;

const formColumns = ['consent_form_id', 'name', 'current_version', 'created_by_user_id', 'created_at', 'updated_at'] as const;
const summaryColumns = ['consent_form_id', 'version', 'title', 'language', 'content_sha256', 'created_by_user_id', 'created_at'] as const;
const versionColumns = [...summaryColumns, 'body', 'required_statements', 'optional_choices'] as const;

export type VersionSummaryRow = Pick<ConsentFormVersionRow, (typeof summaryColumns)[number]>;

export async function insertForm(db: Executor, form: Insertable<ConsentFormsTable>): Promise<ConsentFormRow> {
  return db.insertInto('consent_forms').values(form).returning(formColumns).executeTakeFirstOrThrow() as Promise<ConsentFormRow>;
}

export async function insertVersion(db: Executor, version: Insertable<ConsentFormVersionsTable>): Promise<ConsentFormVersionRow> {
  return db.insertInto('consent_form_versions').values(version).returning(versionColumns).executeTakeFirstOrThrow() as Promise<ConsentFormVersionRow>;
}

export async function findForm(db: Executor, workspaceId: string, consentFormId: string) {
  return db.selectFrom('consent_forms').where('workspace_id', '=', workspaceId).where('consent_form_id', '=', consentFormId).select(formColumns).executeTakeFirst();
}

/**
 * Takes the form's next version number: the row's update serialises concurrent publishes of one
 * form, so each gets its own number and the last to commit is the current one.
 */
export async function advanceVersion(db: Executor, workspaceId: string, consentFormId: string, at: string) {
  return db
    .updateTable('consent_forms')
    .set((eb) => ({ current_version: eb('current_version', '+', 1), updated_at: at }))
    .where('workspace_id', '=', workspaceId)
    .where('consent_form_id', '=', consentFormId)
    .returning(formColumns)
    .executeTakeFirst();
}

export async function findVersion(db: Executor, workspaceId: string, consentFormId: string, version: number): Promise<ConsentFormVersionRow | undefined> {
  return db
    .selectFrom('consent_form_versions')
    .where('workspace_id', '=', workspaceId)
    .where('consent_form_id', '=', consentFormId)
    .where('version', '=', version)
    .select(versionColumns)
    .executeTakeFirst() as Promise<ConsentFormVersionRow | undefined>;
}

/** Every version of a form, newest first, without their text. */
export async function listVersionSummaries(db: Executor, workspaceId: string, consentFormId: string): Promise<VersionSummaryRow[]> {
  return db
    .selectFrom('consent_form_versions')
    .where('workspace_id', '=', workspaceId)
    .where('consent_form_id', '=', consentFormId)
    .select(summaryColumns)
    .orderBy('version', 'desc')
    .execute();
}

/** A page of forms in the order they were made, after the keyset `afterId`, each with its current version's summary; plus the exact total. */
export async function listForms(db: Executor, workspaceId: string, afterId: string | undefined, size: number) {
  const base = db.selectFrom('consent_forms').where('workspace_id', '=', workspaceId);
  const [rows, count] = await Promise.all([
    db
      .selectFrom('consent_forms as f')
      .innerJoin('consent_form_versions as v', (join) =>
        join.onRef('v.workspace_id', '=', 'f.workspace_id').onRef('v.consent_form_id', '=', 'f.consent_form_id').onRef('v.version', '=', 'f.current_version'),
      )
      .where('f.workspace_id', '=', workspaceId)
      .$if(afterId !== undefined, (query) => query.where('f.consent_form_id', '>', afterId!))
      .select([
        'f.consent_form_id',
        'f.name',
        'f.created_at',
        'f.updated_at',
        'v.version',
        'v.title',
        'v.language',
        'v.content_sha256',
        'v.created_by_user_id as version_created_by_user_id',
        'v.created_at as version_created_at',
      ])
      .orderBy('f.consent_form_id')
      .limit(size + 1)
      .execute(),
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.total) };
}

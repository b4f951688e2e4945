import Fastify from 'fastify';
import { Type } from '@sinclair/typebox';
import { openDatabase } from '../src/db/database.js';
import { Study, studySchemas } from '../src/families/studies/schemas.js';
import { presentPlan, presentScreener } from '../src/families/studies/service.js';
import type { StoredStudyPlan } from '../src/db/schema.js';
import type { StudyRecord } from '../src/families/studies/queries.js';
import { captureFindStudy } from './lib/find-study-sql.js';
import { failAsChild, serveAsChild } from './lib/child.js';

/**
 * The http bench's floor, in a process of its own: a bare Fastify 5 route that sends findStudy's
 * exact SQL and serializes the row with the same response schema, so it returns the same bytes as
 * the service (which the bench runs as users do, dist/server.js). The store comes from
 * DATABASE_URL, or DATA_DIR for the embedded store.
 */

const iso = (value: string) => new Date(value).toISOString();

interface FloorRow {
  createdAt: string;
  plan: StoredStudyPlan;
  screener: StudyRecord['screener'];
}

async function startFloor() {
  const workspaceId = process.env.BENCH_WORKSPACE_ID;
  if (!workspaceId) throw new Error('BENCH_WORKSPACE_ID is required for the floor');
  const databaseUrl = process.env.DATABASE_URL || undefined;
  // The same store setup as the service: same pool size, same type parsers.
  const database = await openDatabase(databaseUrl ? { databaseUrl } : { dataDir: process.env.DATA_DIR });
  const lookup = await captureFindStudy(true);
  const app = Fastify({ logger: false });
  for (const schema of studySchemas) app.addSchema(schema);
  app.get<{ Params: { studyId: string } }>(
    '/v1/studies/:studyId',
    { schema: { response: { 200: Type.Ref(Study) } } },
    async (request, reply) => {
      const { rows } = await database.db.executeQuery<FloorRow>(lookup(workspaceId, request.params.studyId));
      const row = rows[0];
      if (!row) return reply.code(404).send({ errors: [{ message: 'Study not found', path: ['studyId'] }] });
      const { screener } = row;
      // The presentation the service applies to this row, and nothing else.
      return {
        ...row,
        createdAt: iso(row.createdAt),
        studyPlan: presentPlan(row.plan),
        // Its questions as the service shows them (choices, number rules and skip logic only where set: issue 33).
        screener: screener && presentScreener(screener),
      };
    },
  );
  await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    port: portOf(app.server.address()),
    close: async () => {
      await app.close();
      await database.close();
    },
  };
}

function portOf(address: ReturnType<import('node:net').Server['address']>): number {
  if (!address || typeof address === 'string') throw new Error('server has no TCP address');
  return address.port;
}

async function main() {
  if (process.argv[2] !== 'floor') throw new Error(`mode must be floor, got ${process.argv[2]}`);
  const server = await startFloor();
  serveAsChild(server.close, server.port);
}

main().catch(failAsChild);

import Fastify from 'fastify';
import { Type } from '@sinclair/typebox';
import { buildService } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { Study, studySchemas } from '../src/families/studies/schemas.js';
import { presentPlan } from '../src/families/studies/service.js';
import type { StoredStudyPlan } from '../src/db/schema.js';
import { captureFindStudy } from './lib/find-study-sql.js';
import { failAsChild, serveAsChild } from './lib/child.js';

/**
 * One of the two servers the http bench compares, run in its own process:
 *   service — the real service (buildService), logger off, in-memory rate limiter;
 *   floor   — a bare Fastify 5 route that sends findStudy's exact SQL and serializes the row
 *             with the same response schema, so it returns the same bytes.
 * The store comes from DATABASE_URL, or DATA_DIR for the embedded store. The import bench runs
 * the service mode too, with JOBS=on and a short JOB_POLL_SECONDS in its environment, so the
 * import's background job runs in this process as it would in a deployed one.
 */

async function startService() {
  const config = loadConfig(
    { ...process.env, REDIS_URL: '', LOG_LEVEL: 'silent', TEST_HELPERS: '' },
    // High enough never to trip during a run: the bench measures the limiter's cost, not its refusals.
    { host: '127.0.0.1', port: 0, rateLimitMax: 1_000_000_000 },
  );
  const service = await buildService({ config, logger: false });
  await service.app.listen({ host: config.host, port: 0 });
  return { port: portOf(service.app.server.address()), close: () => service.close() };
}

const iso = (value: string) => new Date(value).toISOString();

interface FloorRow {
  createdAt: string;
  plan: StoredStudyPlan;
  screener: { createdAt: string; updatedAt: string; externalSurveySetupUpdatedAt: string | null } | null;
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
        screener: screener && {
          ...screener,
          createdAt: iso(screener.createdAt),
          updatedAt: iso(screener.updatedAt),
          externalSurveySetupUpdatedAt: screener.externalSurveySetupUpdatedAt === null ? null : iso(screener.externalSurveySetupUpdatedAt),
        },
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
  const mode = process.argv[2];
  if (mode !== 'service' && mode !== 'floor') throw new Error(`mode must be service or floor, got ${mode}`);
  const server = mode === 'service' ? await startService() : await startFloor();
  serveAsChild(server.close, server.port);
}

main().catch(failAsChild);

import type { FastifyInstance } from 'fastify';
import { type KyselyPlugin, PostgresQueryCompiler, type PluginTransformQueryArgs, type PluginTransformResultArgs, type QueryResult, type RootOperationNode, type UnknownRow } from 'kysely';
import { buildService } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { portable } from './lib/captured.js';
import { failAsChild, serveAsChild } from './lib/child.js';

/**
 * The real service (buildService) for the search bench, in its own process: logger off, jobs
 * off, in-memory rate limiter with a limit never reached. With BENCH_CAPTURE=on it also records
 * every statement it sends (SQL, parameters, when it started and ended), and answers
 * GET /bench/captured with those recorded since the last call: the bench sends one warm request,
 * reads back exactly what it sent, and replays that on a bare client as the floor. The measured
 * runs use a child without the recorder.
 */

export interface CapturedStatement {
  sql: string;
  /** As sent, except that binary ones (a page's bitmap of matches) travel as `{ base64 }` (bench/lib/captured.ts). */
  parameters: unknown[];
  startMs: number;
  endMs: number;
}

/** Compiles each query as the driver will receive it (the same compiler, after every other plugin). */
class StatementRecorder implements KyselyPlugin {
  readonly #compiler = new PostgresQueryCompiler();
  readonly #pending = new WeakMap<object, CapturedStatement>();
  recorded: CapturedStatement[] = [];

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const compiled = this.#compiler.compileQuery(args.node, args.queryId);
    const statement: CapturedStatement = { sql: compiled.sql, parameters: compiled.parameters.map(portable), startMs: performance.now(), endMs: Number.NaN };
    this.#pending.set(args.queryId, statement);
    this.recorded.push(statement);
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const statement = this.#pending.get(args.queryId);
    if (statement) statement.endMs = performance.now();
    return args.result;
  }
}

async function main() {
  const capture = process.env.BENCH_CAPTURE === 'on';
  const config = loadConfig(
    { ...process.env, REDIS_URL: '', LOG_LEVEL: 'silent', TEST_HELPERS: '', JOBS: 'off' },
    { host: '127.0.0.1', port: 0, rateLimitMax: 1_000_000_000 },
  );
  const recorder = new StatementRecorder();
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const service = await buildService({
    config,
    // Both handles record: the owner's and each workspace's (row-level security's scope, src/db/tenancy.ts).
    database: capture ? { ...database, db: database.db.withPlugin(recorder), forTenant: (workspaceId: string) => database.forTenant(workspaceId).withPlugin(recorder) } : database,
    logger: false,
    // The bench migrated the store before starting this process (kept data may have had migrations
    // merged from other branches applied out of name order, which the ordered check would refuse).
    migrate: false,
    extraRoutes: capture
      ? (app: FastifyInstance) => {
          app.get('/bench/captured', { schema: { hide: true }, config: { public: true } }, async () => {
            const statements = recorder.recorded;
            recorder.recorded = [];
            return statements;
          });
        }
      : undefined,
  });
  await service.app.listen({ host: '127.0.0.1', port: 0 });
  const address = service.app.server.address();
  if (!address || typeof address === 'string') throw new Error('server has no TCP address');
  serveAsChild(async () => {
    await service.close();
    await database.close();
  }, address.port);
}

main().catch(failAsChild);

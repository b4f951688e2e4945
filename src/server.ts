// Alone, and first: the young generation stays small while the rest loads (young-generation.ts).
import { allowYoungGenerationGrowth } from './young-generation.js';

// The service, loaded once young-generation.ts has run: ESM loads every static import before it
// runs any module, so these are imported here rather than above. The store is opened first, and
// the service's code (app.js, most of the start's module loading) loads while it opens: PGlite
// reads its files and compiles its WASM off the main thread meanwhile.
const [{ ConfigError, loadConfig }, { DataDirLockedError, openDatabase }, { migrateToLatest }] = await Promise.all([import('./config.js'), import('./db/database.js'), import('./db/migrate.js')]);

/** After the server listens, the background work waits this long: the first requests come first (app.ts, deferBackground). */
const BACKGROUND_DELAY_MS = 1000;

async function main() {
  const config = loadConfig();
  // Opened and migrated (on PostgreSQL: connected, the migrations checked) while app.js loads.
  const openingDatabase = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }).then(async (database) => {
    await migrateToLatest(database.db);
    return database;
  });
  // Settled here too, so that a failure is not reported as unhandled while app.js loads: buildService rethrows it.
  openingDatabase.catch(() => {});
  const { buildService } = await import('./app.js');
  const service = await buildService({ config, openingDatabase, migrate: false, deferBackground: true });
  const { app } = service;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    const force = setTimeout(() => {
      app.log.error('shutdown took longer than 25 s; exiting');
      process.exit(1);
    }, 25_000);
    force.unref();
    try {
      await service.close();
      app.log.info('stopped');
      process.exit(0);
    } catch (error) {
      app.log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  await app.listen({ host: config.host, port: config.port });
  allowYoungGenerationGrowth();
  setTimeout(() => {
    service.startBackground().catch((error: unknown) => {
      // As a failure to start the service: buildService threw it before the work was deferred.
      app.log.error({ err: error }, 'background work could not start; exiting');
      process.exit(1);
    });
  }, BACKGROUND_DELAY_MS);
  app.log.info({ store: service.deps.storeKind, rateLimitStore: config.redisUrl ? 'redis' : 'memory' }, `serving the API at http://${config.host}:${config.port}/v1`);
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof DataDirLockedError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  }
  process.exit(1);
});

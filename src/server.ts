// Alone, and first: the young generation stays small while the rest loads (young-generation.ts).
import { allowYoungGenerationGrowth } from './young-generation.js';

// The service, loaded once young-generation.ts has run: ESM loads every static import before it
// runs any module, so these are imported here rather than above.
const [{ buildService }, { ConfigError, loadConfig }, { DataDirLockedError }] = await Promise.all([import('./app.js'), import('./config.js'), import('./db/database.js')]);

async function main() {
  const config = loadConfig();
  const service = await buildService({ config });
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

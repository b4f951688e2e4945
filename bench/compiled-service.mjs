// The service as shipped (compiled `dist/`, plain node, no TypeScript loader) in a bench's child
// process, speaking the same IPC as bench/lib/child.ts's serveAsChild. Plain JavaScript, so that
// nothing compiles it at run time; `npm run build` makes dist/ first.
const { buildService } = await import('../dist/app.js');
const { loadConfig } = await import('../dist/config.js');

try {
  // BENCH_MIGRATE=off: the bench migrated the store itself (the search bench's kept data).
  const config = loadConfig(
    { ...process.env, REDIS_URL: '', LOG_LEVEL: 'silent', TEST_HELPERS: '' },
    { host: '127.0.0.1', port: 0, rateLimitMax: 1_000_000_000 },
  );
  const service = await buildService({ config, logger: false, migrate: process.env.BENCH_MIGRATE !== 'off' });
  await service.app.listen({ host: '127.0.0.1', port: 0 });
  let closing;
  const shutdown = () => {
    closing ??= service.close().finally(() => process.exit(0));
  };
  process.on('message', (message) => {
    if (message.type === 'stop') shutdown();
  });
  process.on('disconnect', shutdown);
  process.send?.({ type: 'ready', port: service.app.server.address().port });
} catch (error) {
  process.send?.({ type: 'failed', message: error?.stack ?? String(error) }, () => process.exit(1));
}

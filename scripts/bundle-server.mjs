// The server as `npm start` runs it: src/server.ts and what it loads, dependencies included, bundled
// by esbuild into dist/server.js and its chunks (dist/chunks/). `tsc` still compiles everything
// else (the CLI, the migrations' runner) into dist/ module by module.
//
// Why a bundle (issue 12): Node spent about 500 ms of a 1 s start resolving and loading the 1,095
// module files of the service and its dependencies (187 of them ours). Bundled, the start on
// PostgreSQL went from 953-970 ms to 589 ms. Code loaded on first use (nodemailer, LiquidJS,
// undici, ipaddr.js) stays in chunks of its own (`splitting`), so start-up does not parse it.
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));

rmSync(new URL('../dist/chunks', import.meta.url), { recursive: true, force: true });

await build({
  absWorkingDir: root,
  // The template render worker (src/families/messages/render-worker.ts) is a worker thread's own
  // entry: dist/render-worker.js, sharing LiquidJS's chunk with the server.
  entryPoints: ['src/server.ts', 'src/families/messages/render-worker.ts'],
  outdir: 'dist',
  entryNames: '[name]',
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  tsconfig: 'tsconfig.build.json',
  // Stack traces name src/*.ts lines under --enable-source-maps. Without the sources' text the map
  // is a third of the size, and Node parses it whole at start (28 MiB of RSS with the text).
  sourcemap: true,
  sourcesContent: false,
  // Packages that find files beside their own code at run time stay in node_modules: PGlite (its
  // WASM and data files), the API reference's UI and document plugins (their static assets and
  // package.json), pino (its transports' worker files), ioredis (loaded with createRequire only
  // when REDIS_URL is set), pg-native (pg's optional native binding, not installed) and pdfkit
  // (the signed consent copy: it reads its standard fonts' metrics from files beside its code).
  external: ['@electric-sql/pglite', '@fastify/swagger', '@fastify/swagger-ui', 'pino', 'ioredis', 'pg-native', 'pdfkit'],
  // Bundled CommonJS dependencies call require(); in an ES module it has to be made.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  logLevel: 'warning',
});

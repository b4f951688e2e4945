// The server as `npm start` runs it: src/server.ts and what it loads, dependencies included, bundled
// by esbuild into dist/server.js and its chunks (dist/chunks/). `tsc` still compiles everything
// else (the CLI, the migrations' runner) into dist/ module by module.
//
// Why a bundle (issue 12): Node spent about 500 ms of a 1 s start resolving and loading the 1,095
// module files of the service and its dependencies (187 of them ours). Bundled, the start on
// PostgreSQL went from 953-970 ms to 589 ms. Code loaded on first use (nodemailer, LiquidJS,
// undici, ipaddr.js) stays in chunks of its own (`splitting`), so start-up does not parse it.
import { readFile } from 'node:fs/promises';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const requireHere = createRequire(import.meta.url);

/**
 * The OpenAPI document's plugins (@fastify/swagger, @fastify/swagger-ui) find files beside their
 * code through __dirname: their package.json, the UI's static assets. Loaded from node_modules they
 * cost 0.2 s of a start (issue 31: Node resolving and compiling ~100 module files, YAML's among
 * them). Bundled, each of their modules gets a __dirname of its own again, found at run time from
 * where Node resolves the package (from dist/, as the bundle's `require` does), so a moved
 * checkout still finds them.
 */
const packageDirnames = {
  name: 'package-dirnames',
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/]@fastify[\\/]swagger(-ui)?[\\/].*\.js$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8');
      if (!text.includes('__dirname')) return undefined;
      const [, packageRoot, name] = /^(.*[\\/]node_modules[\\/](@fastify[\\/]swagger(?:-ui)?))[\\/]/.exec(args.path);
      const within = path.relative(packageRoot, path.dirname(args.path)).split(path.sep).join('/');
      const packageJson = `${name.split(path.sep).join('/')}/package.json`;
      const dirname = `var __dirname = require('node:path').join(require('node:path').dirname(require.resolve(${JSON.stringify(packageJson)})), ${JSON.stringify(within)});\n`;
      return { contents: dirname + text, loader: 'js', resolveDir: path.dirname(args.path) };
    });
  },
};

/**
 * YAML, which the document's plugins load at once but use only for GET /docs/yaml (never asked by
 * the service or its tests), is loaded on that first use: ~1,800 lines of module bodies off the start.
 */
const lazyYaml = {
  name: 'lazy-yaml',
  setup(build) {
    const real = requireHere.resolve('yaml');
    build.onResolve({ filter: /^yaml$/ }, (args) => (/[\\/]@fastify[\\/]swagger/.test(args.importer) ? { path: 'yaml', namespace: 'lazy-yaml' } : undefined));
    build.onLoad({ filter: /.*/, namespace: 'lazy-yaml' }, () => ({
      contents: `const yaml = () => require(${JSON.stringify(real)});\nmodule.exports = { stringify: (...args) => yaml().stringify(...args), parse: (...args) => yaml().parse(...args) };\n`,
      loader: 'js',
      resolveDir: root,
    }));
  },
};

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
  // WASM and data files), pino (its transports' worker files), ioredis (loaded with createRequire
  // only when REDIS_URL is set) and pg-native (pg's optional native binding, not installed). The
  // document's plugins are bundled, with their __dirname restored (packageDirnames).
  external: ['@electric-sql/pglite', 'pino', 'ioredis', 'pg-native'],
  plugins: [packageDirnames, lazyYaml],
  // Bundled CommonJS dependencies call require(); in an ES module it has to be made.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  logLevel: 'warning',
});

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
 * Packages that find files beside their code through __dirname: the OpenAPI document's plugins
 * (@fastify/swagger's package.json, @fastify/swagger-ui's static assets) and the logger (pino's and
 * thread-stream's worker files, used only by transports, which the service does not configure).
 * Loaded from node_modules they cost 0.2-0.3 s of a start (issue 31: Node resolving and compiling
 * ~150 module files, YAML's among them). Bundled, each of their modules gets a __dirname of its
 * own again, found at run time where Node resolves the package from dist/ (as the bundle's
 * `require` does), so a moved checkout still finds them.
 */
const dirnamePackages = ['@fastify/swagger', '@fastify/swagger-ui', 'pino', 'thread-stream'];
const packageDirnames = {
  name: 'package-dirnames',
  setup(build) {
    const pattern = new RegExp(`[\\\\/]node_modules[\\\\/](${dirnamePackages.map((name) => name.replace('/', '[\\\\/]')).join('|')})[\\\\/].*\\.js$`);
    build.onLoad({ filter: pattern }, async (args) => {
      const text = await readFile(args.path, 'utf8');
      if (!text.includes('__dirname')) return undefined;
      const name = dirnamePackages.find((candidate) => args.path.split(path.sep).join('/').includes(`/node_modules/${candidate}/`));
      const packageRoot = path.dirname(requireHere.resolve(`${name}/package.json`));
      // Another copy of the package (nested in a dependent's node_modules) would be found at the wrong place at run time.
      if (!args.path.startsWith(packageRoot + path.sep)) throw new Error(`${args.path} is not in ${packageRoot}, where the bundle will look for ${name}`);
      const within = path.relative(packageRoot, path.dirname(args.path)).split(path.sep).join('/');
      const dirname = `var __dirname = require('node:path').join(require('node:path').dirname(require.resolve(${JSON.stringify(`${name}/package.json`)})), ${JSON.stringify(within)});\n`;
      return { contents: dirname + text, loader: 'js', resolveDir: path.dirname(args.path) };
    });
  },
};

/**
 * pg asks, as it loads, whether it runs on Cloudflare Workers: on Node 20 (no `navigator`) by
 * constructing a `Response`, which makes Node load its own fetch implementation (undici), 20-90 ms
 * of every start, on the embedded store too, where pg is never used. The service runs on Node only:
 * the answer is no. A pg whose check reads otherwise stops the build, to be looked at.
 */
const pgOnNode = {
  name: 'pg-on-node',
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/]pg[\\/]lib[\\/]stream\.js$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8');
      const check = 'function isCloudflareRuntime() {';
      if (!text.includes(check)) throw new Error(`${args.path}: isCloudflareRuntime() not found; see pgOnNode in scripts/bundle-server.mjs`);
      return { contents: text.replace(check, `${check}\n  return false;`), loader: 'js', resolveDir: path.dirname(args.path) };
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
  // Without the indentation and comments the chunks are a third smaller (app: 3.4 to 2.3 MB): Node
  // compiles less text at start, and --enable-source-maps measures fewer lines (20-40% of those
  // two costs). Names are kept; stack traces still map to src/*.ts.
  minifyWhitespace: true,
  // Kept in node_modules: PGlite (its WASM and data files, found through import.meta.url),
  // ioredis (loaded with createRequire only when REDIS_URL is set) and pg-native (pg's optional
  // native binding, not installed) and pdfkit (the signed consent copy: it reads its standard
  // fonts' metrics from files beside its code). The packages that use __dirname are bundled with
  // it restored (packageDirnames). @node-rs/argon2 loads its platform's prebuilt binary (.node) at run time.
  external: ['@electric-sql/pglite', 'ioredis', 'pg-native', 'pdfkit', '@node-rs/argon2'],
  plugins: [packageDirnames, lazyYaml, pgOnNode],
  // Bundled CommonJS dependencies call require(); in an ES module it has to be made.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  logLevel: 'warning',
});

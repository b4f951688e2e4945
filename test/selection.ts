import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Which test files a CI leg runs (TEST_SELECTION), so that each leg runs what can differ between
 * it and the others, and no more (`.ci/run` names the legs):
 *
 * - `all` (the default): every file.
 * - `embedded`: every file but those that drive the compiled server, for the first embedded leg:
 *   a second embedded leg (on another Node version) runs those (`compiled`), so together the two
 *   run every file on the embedded store, each once.
 * - `store`: the files whose outcome can depend on the store: those that reach the database module
 *   (src/db/database.ts) through their imports, found by following them, so a new test that opens
 *   a store is picked up without a list to keep. The console's browser tests are left out: the
 *   console is the same static files on every store, and what its calls do on each store is what
 *   the API's own tests check there. The files that drive the compiled server are left out too:
 *   the `compiled` leg runs them on PostgreSQL (on Node 24), so the store leg need not again.
 * - `runtime`: every file but the console's browser tests, for a leg on another Node version
 *   (Chromium is the same there; the server they drive is what the other files run).
 * - `compiled`: the files that drive the compiled server in a child process (test/compiled-server.ts):
 *   every operation as users run it, the documentation's examples, the SDK walkthrough, backups.
 *   A leg on one more Node version runs these: what users run, on that runtime.
 */
export type TestSelection = 'all' | 'embedded' | 'store' | 'runtime' | 'compiled';

const root = fileURLToPath(new URL('..', import.meta.url));
const storeModule = path.join(root, 'src', 'db', 'database.ts');
const browserHarness = path.join(root, 'test', 'console', 'browser.ts');
const compiledHarness = path.join(root, 'test', 'compiled-server.ts');

/** The project's files a module imports (relative specifiers, `.js` written for `.ts`), static or dynamic. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const match of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm)) {
    const target = path.resolve(path.dirname(file), match[1]!);
    for (const candidate of [target.replace(/\.js$/, '.ts'), target.replace(/\.js$/, '.tsx'), target]) {
      if (existsSync(candidate) && candidate.match(/\.(ts|tsx|js|mjs)$/)) {
        found.push(candidate);
        break;
      }
    }
  }
  return found;
}

/** Whether `file` reaches `target` through its imports. */
function reaches(file: string, target: string, seen = new Map<string, boolean>()): boolean {
  const known = seen.get(file);
  if (known !== undefined) return known;
  seen.set(file, false);
  const result = file === target || importsOf(file).some((imported) => reaches(imported, target, seen));
  seen.set(file, result);
  return result;
}

function testFiles(): string[] {
  const files: string[] = [];
  for (const folder of ['src', 'test', path.join('sdk', 'test')]) {
    for (const name of readdirSync(path.join(root, folder), { recursive: true, encoding: 'utf8' })) {
      if (/\.test\.ts$/.test(name)) files.push(path.join(root, folder, name));
    }
  }
  return files.sort();
}

/** The test files (relative to the root) a selection leaves out. */
export function excludedBy(selection: string | undefined): string[] {
  const chosen = (selection ?? 'all') as TestSelection;
  if (!['all', 'embedded', 'store', 'runtime', 'compiled'].includes(chosen)) throw new Error(`TEST_SELECTION must be all, embedded, store, runtime or compiled, not "${selection}"`);
  if (chosen === 'all') return [];
  const seen = new Map<string, boolean>();
  const browserSeen = new Map<string, boolean>();
  const compiledSeen = new Map<string, boolean>();
  if (chosen === 'compiled') return testFiles().filter((file) => !reaches(file, compiledHarness, seen)).map((file) => path.relative(root, file));
  if (chosen === 'embedded') return testFiles().filter((file) => reaches(file, compiledHarness, seen)).map((file) => path.relative(root, file));
  return testFiles()
    .filter((file) => {
      const browser = reaches(file, browserHarness, browserSeen);
      if (browser) return true;
      // The compiled server's files run on the Node 24 leg on PostgreSQL (`compiled`), and on every leg of the embedded store.
      if (chosen === 'store' && reaches(file, compiledHarness, compiledSeen)) return true;
      return chosen === 'store' && !reaches(file, storeModule, seen);
    })
    .map((file) => path.relative(root, file));
}

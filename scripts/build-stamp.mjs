// Whether dist/ (and sdk/dist, console/dist) was built from the sources as they are now.
//
//   node scripts/build-stamp.mjs begin    digest the sources, before a build starts
//   node scripts/build-stamp.mjs finish   the build succeeded: dist/ is of those sources
//   node scripts/build-stamp.mjs ensure   build unless the last finished build was of these sources
//   node scripts/build-stamp.mjs check    exit 1, saying why, unless it was
//
// `npm start` (scripts/start.mjs, in the server's own process), `npm run cli` and `npm test` ensure
// first, so on a built, unchanged checkout they start at once (the full build took 13-31 s before
// every start) and never run code older than the sources. The stamp holds a digest of the build's
// inputs' contents, and one of their sizes and times that answers the usual case without reading
// a file; when the times differ, the contents decide (a checkout, a copy that keeps old times, an
// edit undone count for what they hold). The digests are taken before the build begins, so an
// edit made while it runs is built next time.
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// BUILD_STAMP_ROOT: another checkout (the tests use a small one of their own).
export const root = process.env.BUILD_STAMP_ROOT ?? fileURLToPath(new URL('..', import.meta.url));

/** What a build reads: every file below these folders (tests aside), and these files. */
const inputFolders = ['src', 'sdk/src', 'console/src', 'scripts'];
const inputFiles = [
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'sdk/package.json',
  'sdk/tsconfig.json',
  'sdk/tsconfig.build.json',
  'console/package.json',
  'console/tsconfig.json',
  'console/index.html',
  'console/vite.config.ts',
];
/** What a build makes; each must exist for the stamp to hold. */
const outputs = ['dist/server.js', 'dist/cli.js', 'sdk/dist/index.js', 'console/dist/index.html'];

const stampPath = path.join(root, 'dist', '.build-stamp');
const pendingPath = path.join(root, 'dist', '.build-stamp.pending');

const isTest = (name) => /\.test\.tsx?$/.test(name);

/** Every input file, relative to the root, in a fixed order. */
function inputs() {
  const files = [...inputFiles.filter((file) => existsSync(path.join(root, file)))];
  for (const folder of inputFolders) {
    const absolute = path.join(root, folder);
    if (!existsSync(absolute)) continue;
    for (const entry of readdirSync(absolute, { withFileTypes: true, recursive: true })) {
      if (entry.isFile() && !isTest(entry.name)) files.push(path.relative(root, path.join(entry.parentPath, entry.name)));
    }
  }
  return files.sort();
}

/**
 * The sources' digests: of each input's path and contents, and of each input's path, size and
 * modification time. The second needs no file read: when it matches the build's, the contents
 * are taken to match too (git's index trusts the same), and only when it does not are the
 * contents read and compared.
 */
function digests(files, withContents) {
  const stats = createHash('sha256');
  const contents = createHash('sha256');
  for (const file of files) {
    const absolute = path.join(root, file);
    const { size, mtimeMs } = statSync(absolute);
    stats.update(`${file}\0${size}\0${mtimeMs}\0`);
    if (withContents) contents.update(`${file}\0`).update(readFileSync(absolute)).update('\0');
  }
  return { stats: stats.digest('hex'), contents: withContents ? contents.digest('hex') : undefined };
}

/** Why the build is not of the current sources, or undefined when it is. */
export function staleness() {
  const missing = outputs.filter((file) => !existsSync(path.join(root, file)));
  if (missing.length > 0) return `${missing.join(', ')} missing`;
  if (!existsSync(stampPath)) return 'no finished build recorded (dist/.build-stamp)';
  const stamp = JSON.parse(readFileSync(stampPath, 'utf8'));
  const files = inputs();
  if (digests(files, false).stats === stamp.stats) return undefined;
  const now = digests(files, true);
  if (now.contents !== stamp.contents) return 'the sources changed since the last build';
  // Same contents, other times (a fresh checkout of the same commit, a copy): remembered, so the next check reads no file.
  writeFileSync(stampPath, JSON.stringify(now));
  return undefined;
}

/** Builds (`npm run build`) unless the last finished build was of the current sources; exits when the build fails. */
export function ensureBuilt() {
  const why = staleness();
  if (why === undefined) return;
  process.stderr.write(`Building (${why}): npm run build\n`);
  // The build's output goes to stderr: `npm run --silent cli -- … --json` prints one JSON object on stdout, nothing else.
  const built = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: ['inherit', 2, 2] });
  if (built.status !== 0) process.exit(built.status ?? 1);
}

// Run as a command, not imported (scripts/start.mjs imports ensureBuilt). Compared as real paths:
// Node gives the main module's URL with symbolic links resolved, and argv[1] as typed.
const isMain = process.argv[1] !== undefined && existsSync(process.argv[1]) && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
const command = isMain ? process.argv[2] : undefined;
if (command === 'begin') {
  mkdirSync(path.dirname(stampPath), { recursive: true });
  rmSync(stampPath, { force: true });
  writeFileSync(pendingPath, JSON.stringify(digests(inputs(), true)));
} else if (command === 'finish') {
  renameSync(pendingPath, stampPath);
} else if (command === 'check') {
  const why = staleness();
  if (why !== undefined) {
    process.stderr.write(`The build is stale: ${why}. Run \`npm run build\`.\n`);
    process.exit(1);
  }
} else if (command === 'ensure') {
  ensureBuilt();
} else if (command !== undefined) {
  process.stderr.write(`scripts/build-stamp.mjs: unknown command "${command}" (begin, finish, ensure, check)\n`);
  process.exit(2);
}

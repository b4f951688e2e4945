import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { projectRoot } from './processes.js';

/**
 * `npm start` (scripts/start.mjs) and `npm test` build first only when the sources changed
 * (scripts/build-stamp.mjs ensure), and never run a build older than the sources. Tried on a
 * checkout of its own, whose build counts its runs and makes the outputs the stamp asks for; its
 * dist/server.js says which build it is.
 */
const script = path.join(projectRoot, 'scripts', 'build-stamp.mjs');
const startScript = path.join(projectRoot, 'scripts', 'start.mjs');

describe('scripts/build-stamp.mjs: build only when the sources changed', { timeout: 120_000 }, () => {
  let checkout: string;
  const at = (relative: string) => path.join(checkout, relative);
  const stamp = (command: string) => spawnSync(process.execPath, [script, command], { cwd: checkout, env: { ...process.env, BUILD_STAMP_ROOT: checkout }, encoding: 'utf8' });
  const builds = () => Number(readFileSync(at('builds.txt'), 'utf8'));
  /** `npm start` in the checkout: its start script is package.json's, with scripts/start.mjs of this project. */
  const npmStart = (...args: string[]) => spawnSync('npm', ['start', '--silent', '--', ...args], { cwd: checkout, env: { ...process.env, BUILD_STAMP_ROOT: checkout }, encoding: 'utf8' });
  const write = (relative: string, text: string) => {
    mkdirSync(path.dirname(at(relative)), { recursive: true });
    writeFileSync(at(relative), text);
  };

  beforeEach(() => {
    checkout = mkdtempSync(path.join(tmpdir(), 'build-stamp-'));
    // A build as package.json's: begin, make every output, finish; it counts its runs.
    const makeOutputs = ['dist/cli.js', 'sdk/dist/index.js', 'console/dist/index.html']
      .map((file) => `fs.mkdirSync(path.dirname('${file}'),{recursive:true});fs.writeFileSync('${file}','built')`)
      .join(';');
    // The server of build N prints "server of build N" and the source it was built from.
    const makeServer = `fs.mkdirSync('dist',{recursive:true});fs.writeFileSync('dist/server.js','process.stdout.write('+JSON.stringify('server of build '+n+': '+fs.readFileSync('src/server.ts','utf8'))+')')`;
    const build = `node ${JSON.stringify(script)} begin && node -e "const fs=require('fs'),path=require('path');const n=Number(fs.existsSync('builds.txt')?fs.readFileSync('builds.txt','utf8'):0)+1;${makeOutputs};${makeServer};fs.writeFileSync('builds.txt',String(n))" && node ${JSON.stringify(script)} finish`;
    write('package.json', JSON.stringify({ name: 'stamp-test', private: true, scripts: { build, start: `node ${JSON.stringify(startScript)}` } }));
    write('src/server.ts', 'export const answer = 42;\n');
    write('src/families/people/routes.ts', 'export const route = "/people";\n');
    write('console/src/app.tsx', 'export const App = () => null;\n');
    write('src/families/people/routes.test.ts', 'it("works", () => {});\n');
  });
  afterEach(() => rmSync(checkout, { recursive: true, force: true }));

  it('builds a checkout that was never built, then starts without building while nothing changed', () => {
    expect(stamp('check').status).toBe(1);
    expect(stamp('ensure').status).toBe(0);
    expect(builds()).toBe(1);
    expect(stamp('check')).toMatchObject({ status: 0, stderr: '' });
    expect(stamp('ensure').status).toBe(0);
    expect(builds()).toBe(1);
  });

  it('builds again when a source\'s contents change, in any input folder or file', () => {
    stamp('ensure');
    for (const [file, text] of [
      ['src/families/people/routes.ts', 'export const route = "/persons";\n'],
      ['console/src/app.tsx', 'export const App = () => "changed";\n'],
      ['src/new-module.ts', 'export {};\n'],
      ['package.json', readFileSync(at('package.json'), 'utf8') + '\n'],
    ] as const) {
      write(file, text);
      const checked = stamp('check');
      expect(checked.status, file).toBe(1);
      expect(checked.stderr).toMatch(/the sources changed since the last build/);
      const before = builds();
      expect(stamp('ensure').status).toBe(0);
      expect(builds(), file).toBe(before + 1);
    }
  });

  it('builds again when a source is removed, or an output is missing', () => {
    stamp('ensure');
    rmSync(at('src/families/people/routes.ts'));
    expect(stamp('check').status).toBe(1);
    stamp('ensure');
    rmSync(at('dist/server.js'));
    expect(stamp('check').stderr).toMatch(/dist\/server\.js missing/);
    stamp('ensure');
    expect(builds()).toBe(3);
    expect(stamp('check').status).toBe(0);
  });

  it('does not build for new times on the same contents (a fresh checkout, a copy), nor for a test file', () => {
    stamp('ensure');
    const past = new Date('2020-01-01T00:00:00Z');
    utimesSync(at('src/server.ts'), past, past);
    utimesSync(at('console/src/app.tsx'), new Date(), new Date(Date.now() + 60_000));
    expect(stamp('check').status).toBe(0);
    write('src/families/people/routes.test.ts', 'it("works again", () => {});\n');
    expect(stamp('check').status).toBe(0);
    expect(builds()).toBe(1);
  });

  it('npm start builds first when the sources changed, then runs that build in the same process, never an older one', () => {
    // Never built: no dist/server.js to run until the start has built one.
    expect(npmStart()).toMatchObject({ status: 0, stdout: 'server of build 1: export const answer = 42;\n' });
    expect(npmStart()).toMatchObject({ status: 0, stdout: 'server of build 1: export const answer = 42;\n', stderr: '' });
    write('src/server.ts', 'export const answer = 43;\n');
    const rebuilt = npmStart();
    expect(rebuilt).toMatchObject({ status: 0, stdout: 'server of build 2: export const answer = 43;\n' });
    expect(rebuilt.stderr).toMatch(/Building \(the sources changed since the last build\)/);
    // Arguments after -- are the server's, not build-stamp commands.
    expect(npmStart('check')).toMatchObject({ status: 0, stdout: 'server of build 2: export const answer = 43;\n' });
    expect(builds()).toBe(2);
  });

  it('npm start does not run the server when the build fails', () => {
    npmStart();
    write('src/server.ts', 'export const answer = 44;\n');
    const manifest = JSON.parse(readFileSync(at('package.json'), 'utf8')) as { scripts: Record<string, string> };
    write('package.json', JSON.stringify({ ...manifest, scripts: { ...manifest.scripts, build: 'node -e "process.exit(3)"' } }));
    const failed = npmStart();
    expect(failed.status).not.toBe(0);
    expect(failed.stdout).toBe('');
  });

  it('counts a build that failed, or one whose sources changed while it ran, as no build', () => {
    stamp('ensure');
    // The build begins (digesting the sources as they are), a source changes, and it finishes: the next start builds again.
    expect(stamp('begin').status).toBe(0);
    write('src/server.ts', 'export const answer = 43;\n');
    expect(stamp('finish').status).toBe(0);
    expect(stamp('check').status).toBe(1);
    // A build that began and never finished leaves no stamp.
    expect(stamp('begin').status).toBe(0);
    expect(stamp('check').stderr).toMatch(/no finished build recorded/);
  });
});

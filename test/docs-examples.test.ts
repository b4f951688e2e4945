import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CompiledServer, type CompiledStore, createCompiledStore, runCompiledCli, startCompiledServer } from './compiled-server.js';
import { storeKind } from './harness.js';
import { projectRoot } from './processes.js';
import { documentationFiles, shellBlocks } from './docs-blocks.js';
import { type SmtpReceiver, startSmtpReceiver } from './smtp-receiver.js';

/**
 * Every shell example of README.md and docs/ works as shown. Each file's ```sh blocks run in
 * order, in one bash session (`set -euo pipefail`, so a failing command fails the file), against
 * the compiled server (`node dist/server.js`, as `npm start` runs it) on a fresh workspace of its
 * own, in an empty folder. Two things a reader replaces, the test replaces the same way: the token
 * placeholder `rk_wsp_…` ("the token printed above") and the address `http://127.0.0.1:8080` (the
 * server's, on a port of the test's). `API` and `TOKEN` are also set, for pages that start from
 * them. A block that cannot run here (it installs, or starts a server of its own) is preceded by
 * `<!-- docs-test: skip: <why, and what tests it instead> -->`.
 */

const everyBlock = documentationFiles().flatMap((file) => shellBlocks(file, readFileSync(path.join(projectRoot, file), 'utf8')));
const filesToRun = [...new Set(everyBlock.filter((block) => !block.skip).map((block) => block.file))];

/** Runs `script` with bash in `cwd`; resolves with its exit code and what it printed. */
function runBash(script: string, cwd: string, env: Record<string, string>, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd, env: { ...process.env, ...env } });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('the documentation\'s shell examples', () => {
  it('are each run here, or say why not', () => {
    expect(everyBlock.length).toBeGreaterThan(10);
    expect(filesToRun).toContain('README.md');
    for (const block of everyBlock) expect(block.code.trim(), `${block.file}:${block.line} is an empty block`).not.toBe('');
  });
});

describe(`the documentation's shell examples, run against the compiled server (${storeKind} store)`, () => {
  let store: CompiledStore;
  let smtp: SmtpReceiver;
  let server: CompiledServer;
  const tokens = new Map<string, string>();

  beforeAll(async () => {
    [store, smtp] = await Promise.all([createCompiledStore(), startSmtpReceiver({ parse: false })]);
    // One workspace per page, made by the CLI before the server starts (the embedded store is one process's at a time).
    for (const file of filesToRun) {
      const { token } = await runCompiledCli<{ token: string }>(['workspace', 'create', '--name', `Docs: ${file}`, '--email', `docs-${tokens.size}@docs.example.test`], store.env);
      tokens.set(file, token);
    }
    server = await startCompiledServer({
      ...store.env,
      JOBS: 'on',
      JOB_POLL_SECONDS: '0.2',
      SMTP_HOST: '127.0.0.1',
      SMTP_PORT: String(smtp.port),
      SMTP_SECURITY: 'none',
      MAIL_FROM: 'Research Team <research@docs.example.test>',
      PUBLIC_URL: 'http://127.0.0.1:8080',
    });
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    await Promise.all([smtp?.close(), store?.drop()]);
  });

  it.each(filesToRun)('%s', async (file) => {
    const origin = `http://127.0.0.1:${server.port}`;
    const token = tokens.get(file)!;
    const blocks = everyBlock.filter((block) => block.file === file && !block.skip);
    const script = [
      'set -euo pipefail',
      ...blocks.map((block) => `echo "::: ${block.file}:${block.line}" >&2\n${block.code.replaceAll('rk_wsp_…', token).replaceAll('http://127.0.0.1:8080', origin)}`),
    ].join('\n');
    const folder = mkdtempSync(path.join(tmpdir(), 'docs-example-'));
    try {
      const { code, output } = await runBash(script, folder, { API: `${origin}/v1`, TOKEN: token }, 150_000);
      const failedAt = [...output.matchAll(/^::: (\S+)$/gm)].pop()?.[1];
      expect(code, `${file}: the block at ${failedAt} failed:\n${output.slice(-4000)}\n--- server:\n${server.output().slice(-2000)}`).toBe(0);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, 180_000);
});

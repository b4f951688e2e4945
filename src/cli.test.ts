import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, storeKind, testDatabaseUrl } from '../test/harness.js';
import { buildService, type Service } from './app.js';
import { loadConfig } from './config.js';
import { migrations } from './db/migrations/index.js';
import { incentiveStatuses } from './families/incentives/states.js';
import { studyStatuses, studyTypes } from './families/studies/schemas.js';
import { allRoles } from './http/rights.js';

/**
 * The admin CLI as an operator runs it: a child process on the same storage as the server. Each
 * run costs a second or two, so the commands build on one another instead of starting over.
 */

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
let dataDir: string;

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCli(args: string[], options: { viaNpm?: boolean } = {}): Promise<CliRun> {
  const env = { ...process.env, DATABASE_URL: testDatabaseUrl ?? '', DATA_DIR: dataDir, REDIS_URL: '', LOG_LEVEL: 'silent' };
  const [command, commandArgs] = options.viaNpm
    ? ['npm', ['run', '--silent', 'cli', '--', ...args]]
    : // The compiled CLI (`npm run cli` runs it; the global setup builds it from the sources first): what users run, and a second a run rather than tsx's five.
      [process.execPath, ['--enable-source-maps', 'dist/cli.js', ...args]];
  return new Promise((resolve, reject) => {
    const child = spawn(command, commandArgs, { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The one JSON object a successful command prints: stdout holds that line and nothing else. */
function outputOf<T>(run: CliRun): T {
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toMatch(/^\{.*\}\n$/);
  return JSON.parse(run.stdout) as T;
}

function expectRefused(run: CliRun, message: RegExp) {
  expect(run.code, run.stdout).not.toBe(0);
  expect(run.code).not.toBeNull();
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(message);
}

/**
 * A service on the CLI's storage. The embedded store admits one process at a time (the CLI holds
 * the DATA_DIR lock while it runs), so it is opened only between CLI runs and closed after use.
 */
async function withService<T>(work: (service: Service) => Promise<T>): Promise<T> {
  const config = loadConfig(
    // JOBS off: a poller would sweep every workspace of the run's shared PostgreSQL database.
    { DATABASE_URL: testDatabaseUrl ?? '', DATA_DIR: dataDir, LOG_LEVEL: 'silent', JOBS: 'off' },
    // Without the principal cache a deactivation made by the CLI is seen by the very next request.
    { authCacheSeconds: 0, rateLimitMax: 100_000 },
  );
  const service = await buildService({ config, logger: false });
  try {
    return await work(service);
  } finally {
    await service.close();
  }
}

beforeAll(() => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'cli-test-'));
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe(`admin CLI (${storeKind} store)`, { timeout: 180_000 }, () => {
  let workspace: { workspaceId: string; userId: string; token: string };
  let researcherId: string;
  let observerId: string;
  let restrictedToken: string;

  it('migrate applies pending migrations, then none, printing only JSON (also through npm run --silent cli)', async () => {
    const first = outputOf<{ migrated: string[] }>(await runCli(['migrate']));
    // The PostgreSQL run database was migrated by the global setup; a fresh DATA_DIR was not.
    expect(first).toEqual({ migrated: storeKind === 'embedded' ? Object.keys(migrations) : [] });
    const again = outputOf<{ migrated: string[] }>(await runCli(['migrate', '--json'], { viaNpm: true }));
    expect(again).toEqual({ migrated: [] });
  });

  it('workspace create prints workspaceId, userId and a token that works on GET /v1/me', async () => {
    workspace = outputOf(await runCli(['workspace', 'create', '--name', 'Acme Research', '--email', 'ada@acme.test', '--full-name', 'Ada Lovelace', '--json']));
    expect(Object.keys(workspace).sort()).toEqual(['token', 'userId', 'workspaceId']);
    expect(workspace.workspaceId).toMatch(/^wsp_/);
    expect(workspace.userId).toMatch(/^usr_/);
    await withService(async (service) => {
      const me = await call(service, 'GET', '/me', { token: workspace.token });
      expect(me.statusCode, me.body).toBe(200);
      expect(me.json()).toMatchObject({
        userId: workspace.userId,
        workspaceId: workspace.workspaceId,
        email: 'ada@acme.test',
        fullname: 'Ada Lovelace',
        role: 'SUPER_ADMIN',
        status: 'ACTIVE',
        teams: [],
      });
      expect(me.json().workspaceSlug).toMatch(/^acme-research-/);
    });
  });

  it('user create adds a user with a seat and teams, creating the teams that do not exist', async () => {
    const researcher = outputOf<{ userId: string }>(
      await runCli(['user', 'create', '--workspace', workspace.workspaceId, '--email', 'grace@acme.test', '--role', 'RESEARCHER', '--full-name', 'Grace Hopper', '--seat', 'LITE', '--team', 'Discovery']),
    );
    researcherId = researcher.userId;
    expect(Object.keys(researcher)).toEqual(['userId']);
    // "discovery" names the existing team (case-insensitively); "Research Ops" is new.
    const observer = outputOf<{ userId: string }>(
      await runCli(['user', 'create', '--workspace', workspace.workspaceId, '--email', 'obs@acme.test', '--role', 'OBSERVER', '--team', 'discovery', '--team', 'Research Ops']),
    );
    observerId = observer.userId;
    expect(observerId).not.toBe(researcherId);
  });

  it('user create refuses an unknown role: non-zero exit, a message on stderr, nothing on stdout', async () => {
    expectRefused(
      await runCli(['user', 'create', '--workspace', workspace.workspaceId, '--email', 'boss@acme.test', '--role', 'BOSS', '--json']),
      /--role must be one of .*SUPER_ADMIN/,
    );
  });

  it('token create --no-pii --no-screeners makes a token that sees the study without its screener', async () => {
    restrictedToken = outputOf<{ token: string }>(await runCli(['token', 'create', '--user', researcherId, '--no-pii', '--no-screeners'])).token;
    expect(restrictedToken).toMatch(new RegExp(`^rk_${workspace.workspaceId}_`));
    await withService(async (service) => {
      const teams = await call(service, 'GET', '/teams', { token: workspace.token });
      expect(teams.json().results.map((team: { name: string }) => team.name)).toEqual(['Discovery', 'Research Ops']);

      const me = await call(service, 'GET', '/me', { token: restrictedToken });
      expect(me.statusCode, me.body).toBe(200);
      expect(me.json()).toMatchObject({ userId: researcherId, role: 'RESEARCHER', seat: 'LITE', fullname: 'Grace Hopper', teams: [{ name: 'Discovery' }] });

      const stored = await service.deps.db
        .selectFrom('api_tokens')
        .where('workspace_id', '=', workspace.workspaceId)
        .where('user_id', '=', researcherId)
        .select(['can_read_personal_data', 'can_read_screeners'])
        .execute();
      expect(stored).toEqual([{ can_read_personal_data: false, can_read_screeners: false }]);

      const created = await call(service, 'POST', '/studies', {
        token: workspace.token,
        body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Checkout interviews', includeScreener: true } },
      });
      expect(created.statusCode, created.body).toBe(201);
      const { studyId } = created.json<{ studyId: string }>();
      const asAdmin = await call(service, 'GET', `/studies/${studyId}`, { token: workspace.token });
      expect(asAdmin.json().screener).toMatchObject({ studyId, type: 'SERVICE' });
      const restricted = await call(service, 'GET', `/studies/${studyId}`, { token: restrictedToken });
      expect(restricted.statusCode, restricted.body).toBe(200);
      expect(restricted.json()).toMatchObject({ studyId, screener: null });
    });
  });

  it('token list and token revoke: one token answers 401 from then on, the user\'s others keep working (issue 32, item 7)', async () => {
    const first = outputOf<{ token: string; tokenId: string }>(await runCli(['token', 'create', '--user', observerId]));
    const second = outputOf<{ token: string; tokenId: string }>(await runCli(['token', 'create', '--user', observerId, '--no-pii']));
    expect(first.tokenId).toMatch(/^tok_/);
    const listed = outputOf<{ tokens: Record<string, unknown>[] }>(await runCli(['token', 'list', '--user', observerId]));
    expect(listed.tokens).toEqual([
      { tokenId: first.tokenId, workspaceId: workspace.workspaceId, userId: observerId, canReadPersonalData: true, canReadScreeners: true, createdAt: expect.any(String), revokedAt: null },
      { tokenId: second.tokenId, workspaceId: workspace.workspaceId, userId: observerId, canReadPersonalData: false, canReadScreeners: true, createdAt: expect.any(String), revokedAt: null },
    ]);
    // Neither a token nor its digest is ever listed.
    expect(JSON.stringify(listed)).not.toContain(first.token.slice(-20));
    expect(JSON.stringify(listed)).not.toMatch(/[0-9a-f]{64}/);

    const revoked = outputOf<{ tokenId: string; userId: string; revokedAt: string }>(await runCli(['token', 'revoke', '--token-id', first.tokenId]));
    expect(revoked).toEqual({ tokenId: first.tokenId, userId: observerId, revokedAt: expect.any(String) });
    await withService(async (service) => {
      const refused = await call(service, 'GET', '/me', { token: first.token });
      expect(refused.statusCode).toBe(401);
      expect(refused.body).toBe('Unauthorized');
      expect((await call(service, 'GET', '/me', { token: second.token })).statusCode).toBe(200);
    });
    // Again: nothing changes, and it says when. By the token itself: the second one.
    expect(outputOf(await runCli(['token', 'revoke', '--token-id', first.tokenId]))).toEqual(revoked);
    expect(outputOf<{ tokenId: string }>(await runCli(['token', 'revoke', '--token', second.token])).tokenId).toBe(second.tokenId);
    const after = outputOf<{ tokens: { tokenId: string; revokedAt: string | null }[] }>(await runCli(['token', 'list', '--workspace', workspace.workspaceId]));
    expect(after.tokens.filter((token) => token.revokedAt !== null).map((token) => token.tokenId).sort()).toEqual([first.tokenId, second.tokenId].sort());
    await withService(async (service) => {
      expect((await call(service, 'GET', '/me', { token: second.token })).statusCode).toBe(401);
      expect((await call(service, 'GET', '/me', { token: workspace.token })).statusCode).toBe(200);
    });
    expectRefused(await runCli(['token', 'revoke', '--token-id', 'tok_unknown']), /Token tok_unknown not found/);
    expectRefused(await runCli(['token', 'revoke']), /--token-id T or --token/);
  });

  if (storeKind === 'embedded') {
    it('refuses to open a DATA_DIR that a running server holds, with a clear message, and leaves it intact', async () => {
      await withService(async () => {
        expectRefused(await runCli(['user', 'deactivate', '--user', researcherId]), /in use by another process/);
      });
      await withService(async (service) => {
        expect((await call(service, 'GET', '/me', { token: restrictedToken })).statusCode).toBe(200);
      });
    });
  }

  it("user deactivate makes the user's tokens answer 401", async () => {
    expect(outputOf(await runCli(['user', 'deactivate', '--user', researcherId]))).toEqual({ userId: researcherId, status: 'DEACTIVATED' });
    await withService(async (service) => {
      const refused = await call(service, 'GET', '/me', { token: restrictedToken });
      expect(refused.statusCode).toBe(401);
      expect(refused.body).toBe('Unauthorized');
      expect((await call(service, 'GET', '/me', { token: workspace.token })).statusCode).toBe(200);
    });
  });

  it('seed --demo prints a workspace and a token; the workspace has every study type and status, every role, teams, a template, incentives of every status, a signup form and segments', async () => {
    const seeded = outputOf<{
      workspaceId: string;
      token: string;
      tokens: Record<string, string>;
      studyTemplateId: string;
      participantCount: number;
      incentiveIds: Record<string, string[]>;
      signupFormId: string;
      segmentIds: string[];
    }>(await runCli(['seed', '--demo', '--json']));
    expect(seeded.workspaceId).toMatch(/^wsp_/);
    expect(seeded.token).toMatch(new RegExp(`^rk_${seeded.workspaceId}_`));
    await withService(async (service) => {
      const studies = await call(service, 'GET', '/studies', { token: seeded.token, query: { size: '100' } });
      expect(studies.statusCode, studies.body).toBe(200);
      const kinds = new Set(studies.json<{ results: { studyType: string; status: string }[] }>().results.map((study) => `${study.studyType}/${study.status}`));
      for (const studyType of studyTypes) for (const status of studyStatuses) expect(kinds, `${studyType}/${status}`).toContain(`${studyType}/${status}`);

      const roles: string[] = [];
      for (const token of Object.values(seeded.tokens)) {
        const me = await call(service, 'GET', '/me', { token });
        expect(me.statusCode, me.body).toBe(200);
        expect(me.json().workspaceId).toBe(seeded.workspaceId);
        roles.push(me.json().role);
      }
      expect(roles.sort()).toEqual([...allRoles].sort());

      const teams = await call(service, 'GET', '/teams', { token: seeded.token });
      expect(teams.json().results.length).toBeGreaterThan(0);

      const template = await call(service, 'GET', `/study-templates/${seeded.studyTemplateId}`, { token: seeded.token });
      expect(template.statusCode, template.body).toBe(200);
      const templates = await call(service, 'GET', '/study-templates', { token: seeded.token });
      expect(templates.json().results.map((item: { studyTemplateId: string }) => item.studyTemplateId)).toEqual([seeded.studyTemplateId]);

      // Participants, incentives (every status), a signup form and segments: the ids printed read back.
      expect(seeded.participantCount).toBeGreaterThan(0);
      expect(Object.keys(seeded.incentiveIds).sort()).toEqual([...incentiveStatuses].sort());
      for (const [status, ids] of Object.entries(seeded.incentiveIds)) {
        expect(ids.length, status).toBeGreaterThan(0);
        const incentive = await call(service, 'GET', `/incentives/${ids[0]}`, { token: seeded.token });
        expect(incentive.statusCode, incentive.body).toBe(200);
        expect(incentive.json().status).toBe(status);
      }
      expect((await call(service, 'GET', `/signups/${seeded.signupFormId}`, { token: seeded.token })).statusCode).toBe(200);
      for (const segmentId of seeded.segmentIds) expect((await call(service, 'GET', `/segments/${segmentId}`, { token: seeded.token })).statusCode).toBe(200);
    });
  });
});

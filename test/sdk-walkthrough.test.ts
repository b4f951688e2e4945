import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createClient } from '@recruit-ops/sdk';
import { walkthrough } from '../sdk/examples/walkthrough.js';
import { type CompiledServer, type CompiledStore, createCompiledStore, runCompiledCli, startCompiledServer } from './compiled-server.js';
import { storeKind } from './harness.js';
import { projectRoot } from './processes.js';

const examplePath = path.join(projectRoot, 'sdk', 'examples', 'walkthrough.ts');

/** The `// #region name` … `// #endregion` parts of the example, dedented as docs/api/sdk.md shows them. */
function regions(source: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const match of source.matchAll(/^( *)\/\/ #region (\S+)\n([\s\S]*?)^ *\/\/ #endregion\n/gm)) {
    const indent = match[1]!.length;
    const body = match[3]!
      .split('\n')
      .map((line) => line.slice(Math.min(indent, line.length - line.trimStart().length)))
      .join('\n');
    found.set(match[2]!, body.trimEnd());
  }
  return found;
}

/** Runs `check` until it answers true, every 100 ms, for at most 30 s. */
async function until(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('the event feed did not show the walkthrough\'s events within 30 s');
    await sleep(100);
  }
}

/** A page's TypeScript code blocks. */
const typescriptBlocks = (readme: string) => [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);

describe('docs/api/sdk.md: the walkthrough with the SDK (sdk/examples/walkthrough.ts)', () => {
  it('is shown on the page as it is in the example, region by region, in order', () => {
    const example = regions(readFileSync(examplePath, 'utf8'));
    expect([...example.keys()]).toEqual(['first-request', 'import', 'participants', 'signups', 'incentives']);
    const blocks = typescriptBlocks(readFileSync(path.join(projectRoot, 'docs', 'api', 'sdk.md'), 'utf8'));
    let from = 0;
    for (const [name, code] of example) {
      const index = blocks.findIndex((block, at) => at >= from && block.includes(code));
      expect(index, `docs/api/sdk.md shows region "${name}" of sdk/examples/walkthrough.ts unchanged in a \`\`\`ts block (copy it from there)`).toBeGreaterThanOrEqual(from);
      from = index + 1;
    }
  });
});

describe(`the SDK walkthrough against the compiled server (${storeKind} store)`, () => {
  let store: CompiledStore;
  let server: CompiledServer;
  let tenant: { workspaceId: string; token: string };
  let api: string;

  beforeAll(async () => {
    // What `npm start` runs, with background work on (the import completes while the walkthrough
    // polls it), on a store of its own: on the shared PostgreSQL database this instance would run
    // other test files' jobs.
    store = await createCompiledStore();
    tenant = await runCompiledCli(['workspace', 'create', '--name', 'Acme Research', '--email', 'ada@acme.example.test'], store.env);
    server = await startCompiledServer({ ...store.env, JOBS: 'on', JOB_POLL_SECONDS: '0.1' });
    api = server.api;
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await store?.drop();
  });

  it('runs every step, and each step did what the page says', async () => {
    const printed: unknown[][] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((...values: unknown[]) => void printed.push(values));
    let result: Awaited<ReturnType<typeof walkthrough>>;
    try {
      result = await walkthrough(api, tenant.token);
    } finally {
      log.mockRestore();
    }
    const { me, studyId, imported, person, participant, participantEventsCursor, submitted, incentive, again, error } = result;
    const lines = printed.map((values) => values.map((value) => (typeof value === 'string' ? value : JSON.stringify(value))).join(' '));
    const printedLike = (pattern: RegExp) => expect(lines.some((line) => pattern.test(line)), `a line like ${pattern} in:\n${lines.join('\n')}`).toBe(true);

    // A first request
    expect(me.workspaceId).toBe(tenant.workspaceId);
    const read = printed[0]![0] as { studyId: string; status: string; studyPlan: { incentive?: { amount?: number }; language?: string }; screener: { questions: unknown[] } };
    expect(read).toMatchObject({ studyId, status: 'DRAFT', studyPlan: { incentive: { amount: 75 }, language: 'en' } });
    expect(read.screener.questions).toHaveLength(1);
    printedLike(new RegExp(`^${studyId} Checkout interviews$`));

    // The import, read back by search
    expect(imported).toMatchObject({ status: 'COMPLETED', rowsImported: 1, rowsFailed: 0 });
    printedLike(/^per_\S+ grace@example\.org$/);

    // Participants: invited, then scheduled; found by E1; their events, with a cursor to poll from
    expect(person?.email).toBe('grace@example.org');
    printedLike(new RegExp(`^${participant.params.path.participantId} SCHEDULED 2026-12-03T15:00:00(\\.000)?Z$`));
    // An event shows in a feed once every transaction older than it has ended on the database
    // server (docs/api/README.md), and on the run's PostgreSQL server other test files hold some open: what
    // the walkthrough printed may stop short. Polling on from the cursor it kept, as the page
    // says to, brings the rest, each event once.
    expect(participantEventsCursor).toMatch(/\S/);
    const participantMoves = lines.flatMap((line) => /^\S+ (status|approvalStatus|screenerState) (\S+ → \S+)$/.exec(line)?.slice(1, 3).join(' ') ?? []);
    const client = createClient({ baseUrl: api, token: tenant.token });
    let cursor = participantEventsCursor;
    await until(async () => {
      for await (const page of client.pages('/participant-status-events', { params: { query: { studyId, startCursor: cursor } } })) {
        participantMoves.push(...page.results.map((event) => `${event.field} ${event.from} → ${event.to}`));
        cursor = page.pageInfo.endCursor;
      }
      return participantMoves.length >= 2;
    });
    expect(participantMoves).toEqual(['status NOT_STARTED → INVITED', 'status INVITED → SCHEDULED']);

    // The public signup form; the study's status events (the walkthrough printed the first of them, in order)
    expect(submitted.submissionId).toMatch(/\S/);
    const studyMoves = ['null → DRAFT', 'DRAFT → ACTIVE', 'ACTIVE → PAUSED', 'PAUSED → ACTIVE'];
    const printedStudyMoves = lines.flatMap((line) => new RegExp(`^\\S+ ${studyId} (\\S+ → \\S+)$`).exec(line)?.[1] ?? []);
    expect(studyMoves.slice(0, printedStudyMoves.length)).toEqual(printedStudyMoves);
    await until(async () => {
      const moves: string[] = [];
      for await (const event of client.paginate('/study-status-events')) if (event.studyId === studyId) moves.push(`${event.from} → ${event.to}`);
      expect(studyMoves.slice(0, moves.length)).toEqual(moves);
      return moves.length === studyMoves.length;
    });

    // Incentives: paid once under one key, resent, canceled, and a typed error
    expect(incentive).toMatchObject({ type: 'MONEY_OR_GIFT_CARD', amountCents: 7500, status: 'UNCLAIMED' });
    expect(again.data?.incentiveId).toBe(incentive.incentiveId);
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect(lines).toContain('true true');
    expect(printed).toContainEqual([{ success: true, incentiveId: incentive.incentiveId }]);
    expect(lines).toContain('CANCELED');
    expect(error).toEqual({ errors: [expect.objectContaining({ path: ['incentiveId'] })] });
  });
});

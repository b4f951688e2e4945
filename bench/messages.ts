import { execFileSync, type ChildProcess } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import nodemailer from 'nodemailer';
import pg from 'pg';
import { SMTPServer } from 'smtp-server';
import { startBenchService, stopProcess } from './lib/compiled-server.js';
import { processMemory } from './lib/memory.js';
import { dropPostgresDatabase, recreatePostgresDatabase, storeEnv } from './lib/store.js';
import { formatTable } from './lib/table.js';
import { type BenchOptions, type BenchResult, flagNumber } from './lib/types.js';

/**
 * `npm run bench -- messages`: the compiled server on a PostgreSQL database of its own sends a
 * template to every participant of a study (10,000; --participants=N) through a real SMTP
 * receiver on loopback (smtp-server, in this process, counting what arrives).
 * - One request: POST /studies/{id}/messages with `filter: {filters: []}`; its latency (the
 *   outbox written in one transaction), then messages/s and the time from the request to the
 *   receiver's last message.
 * - Floor: the same number of messages sent straight through nodemailer's pooled transport, with
 *   the same pool size (SMTP_POOL_SIZE, 5), from this process to the same receiver: what SMTP
 *   itself costs, without rendering, claiming or recording.
 */

const root = fileURLToPath(new URL('..', import.meta.url));
const DATABASE = 'bench_messages';
const POOL_SIZE = 5;
const round = (value: number) => Math.round(value * 10) / 10;

export async function run(options: BenchOptions): Promise<BenchResult> {
  const participants = flagNumber(options.flags, 'participants', options.quick ? 1_000 : 10_000);

  process.stderr.write('building dist/ (npm run build)\n');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });

  // The receiver: a real SMTP server that reads each message whole and counts it.
  let received = 0;
  let lastArrival = 0;
  let waiter: { count: number; resolve: () => void } | undefined;
  const smtp = new SMTPServer({
    secure: false,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    maxClients: 50,
    onData(stream, _session, callback) {
      stream.on('data', () => undefined);
      stream.on('end', () => {
        received++;
        lastArrival = performance.now();
        callback();
        if (waiter && received >= waiter.count) {
          const done = waiter;
          waiter = undefined;
          done.resolve();
        }
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const smtpPort = (smtp.server.address() as AddressInfo).port;
  const arrived = (count: number, timeoutMs: number) =>
    received >= count
      ? Promise.resolve()
      : new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`only ${received} of ${count} messages within ${timeoutMs} ms`)), timeoutMs);
          waiter = { count, resolve: () => (clearTimeout(timer), resolve()) };
        });

  const store = await recreatePostgresDatabase(DATABASE);
  let server: ChildProcess | undefined;
  const pool = new pg.Pool({ connectionString: store.kind === 'postgres' ? store.databaseUrl : '', max: 2 });
  try {
    const started = await startBenchService(
      {
        ...storeEnv(store),
        SMTP_HOST: '127.0.0.1',
        SMTP_PORT: String(smtpPort),
        SMTP_SECURITY: 'none',
        SMTP_POOL_SIZE: String(POOL_SIZE),
        MAIL_FROM: 'Bench <bench@example.org>',
        PUBLIC_URL: 'https://recruit.example.org',
        MAIL_RATE_PER_MINUTE: '100000000',
      },
      'Messages bench',
    );
    server = started.child;
    const { port, token, workspaceId } = started;
    const base = `http://127.0.0.1:${port}/v1`;
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const call = async (method: string, url: string, body?: unknown, contentType = 'application/json') => {
      const response = await fetch(`${base}${url}`, { method, headers: { ...headers, 'content-type': contentType }, ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }) });
      const text = await response.text();
      if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${text}`);
      return JSON.parse(text) as Record<string, unknown>;
    };

    process.stderr.write(`seeding: ${participants} people (CSV import) and participants\n`);
    const csv = ['email,firstName,lastName', ...Array.from({ length: participants }, (_, index) => `person${index}@example.org,Person${index},Bench`)].join('\n');
    const importId = String((await call('POST', '/imports', csv, 'text/csv')).importId);
    for (;;) {
      const status = await call('GET', `/imports/${importId}`);
      if (status.status === 'COMPLETED') break;
      if (status.status === 'FAILED') throw new Error(`the import failed: ${JSON.stringify(status)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const study = await call('POST', '/studies', { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Bench', externalName: 'Paying online' } });
    const studyId = String(study.studyId);
    const people = await pool.query<{ person_id: string }>('select person_id from people where workspace_id = $1 order by person_id', [workspaceId]);
    for (let index = 0; index < people.rows.length; index += 1000) {
      await call('POST', `/studies/${studyId}/participants`, { personIds: people.rows.slice(index, index + 1000).map((row) => row.person_id) });
    }
    const template = await call('POST', '/message-templates', {
      name: 'Invitation',
      subject: 'Join {{ study.externalName }}, {{ person.firstName | default: "friend" }}',
      textBody: 'Hi {{ person.fullName }},\n\n{{ workspace.name }} invites you to {{ study.externalName }}.\n\nUnsubscribe: {{ links.unsubscribe }}',
      htmlBody: '<p>Hi {{ person.firstName }},</p><p>{{ workspace.name }} invites you to <b>{{ study.externalName }}</b>.</p><p><a href="{{ links.unsubscribe }}">Unsubscribe</a></p>',
    });

    process.stderr.write(`sending: one request to ${participants} participants by filter\n`);
    const requestStart = performance.now();
    const sent = await call('POST', `/studies/${studyId}/messages`, { templateId: template.templateId, filter: { filters: [] } });
    const requestMs = performance.now() - requestStart;
    if (sent.queued !== participants) throw new Error(`queued ${String(sent.queued)} of ${participants}: ${JSON.stringify(sent)}`);
    await arrived(participants, 600_000);
    const lastDeliveryMs = lastArrival - requestStart;
    const serverMemory = processMemory(server.pid);
    // Every message recorded SENT once its outcome is written: wait for the last batch's record.
    let recordedSent = 0;
    for (let tries = 0; tries < 100; tries++) {
      recordedSent = Number((await pool.query<{ sent: string }>(`select count(*) as sent from messages where workspace_id = $1 and status = 'SENT'`, [workspaceId])).rows[0]!.sent);
      if (recordedSent === participants) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const lastRecordedMs = performance.now() - requestStart;

    // Floor: nodemailer straight to the same receiver, same pool size, a message of the same shape.
    process.stderr.write(`floor: ${participants} messages straight through nodemailer\n`);
    const transport = nodemailer.createTransport({ pool: true, host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true, maxConnections: POOL_SIZE, maxMessages: Number.POSITIVE_INFINITY });
    const before = received;
    const floorStart = performance.now();
    await Promise.all(
      Array.from({ length: participants }, (_, index) =>
        transport.sendMail({
          from: 'Bench <bench@example.org>',
          to: `person${index}@example.org`,
          subject: `Join Paying online, Person${index}`,
          text: `Hi Person${index} Bench,\n\nMessages bench invites you to Paying online.\n\nUnsubscribe: https://recruit.example.org/v1/unsubscribe/x`,
          html: `<p>Hi Person${index},</p><p>Messages bench invites you to <b>Paying online</b>.</p><p><a href="https://recruit.example.org/v1/unsubscribe/x">Unsubscribe</a></p>`,
          headers: { 'List-Unsubscribe': '<https://recruit.example.org/v1/unsubscribe/x>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
        }),
      ),
    );
    await arrived(before + participants, 600_000);
    const floorSeconds = (performance.now() - floorStart) / 1000;
    transport.close();

    const figures = {
      participants,
      requestMs: round(requestMs),
      requestToLastDeliveryMs: Math.round(lastDeliveryMs),
      requestToAllRecordedMs: Math.round(lastRecordedMs),
      messagesPerSecond: Math.round(participants / (lastDeliveryMs / 1000)),
      floorMessagesPerSecond: Math.round(participants / floorSeconds),
      recordedSent,
      serverRssMiB: serverMemory ? Math.round(serverMemory.rss / 1048576) : null,
      serverPeakRssMiB: serverMemory ? Math.round(serverMemory.highWaterMark / 1048576) : null,
    };
    process.stdout.write(
      `\n${formatTable(
        ['figure', 'value'],
        [
          [`POST /studies/{id}/messages, ${participants} by filter (ms)`, figures.requestMs],
          ['request → last message received (ms)', figures.requestToLastDeliveryMs],
          ['request → every message recorded SENT (ms)', figures.requestToAllRecordedMs],
          ['messages/s (service)', figures.messagesPerSecond],
          [`floor: nodemailer straight, pool of ${POOL_SIZE} (messages/s)`, figures.floorMessagesPerSecond],
          ['messages recorded SENT', figures.recordedSent],
          ['server RSS now / peak (MiB)', `${String(figures.serverRssMiB)} / ${String(figures.serverPeakRssMiB)}`],
        ],
      )}\n\n`,
    );
    return { bench: 'messages', quick: options.quick, ratio: Math.round((figures.messagesPerSecond / figures.floorMessagesPerSecond) * 100) / 100, ...figures };
  } finally {
    if (server) await stopProcess(server);
    await pool.end();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
    await dropPostgresDatabase(DATABASE);
  }
}

import type { BenchOptions, BenchResult } from './lib/types.js';

/**
 * `npm run bench -- NAME [--quick] [bench flags]`. Each bench prints its own table; the JSON
 * figures are printed here, after every child process has stopped, so they are always the
 * last line of output.
 */
const benches: Record<string, { summary: string; load: () => Promise<{ run(options: BenchOptions): Promise<BenchResult> }> }> = {
  http: {
    summary: 'GET /v1/studies/{id} at 50 connections against a bare Fastify + same-SQL floor (flags: --store=embedded, --profile, --calibrate, --rounds=N, --seconds=N)',
    load: () => import('./http.js'),
  },
  search: {
    summary:
      'POST /v1/studies/{id}/participants/search (10 query shapes) and POST /v1/people/search (those naming no PARTICIPANT property) x first/deep/1000-row pages at concurrency 8, beside the same SQL sent raw, with the server\'s peak RSS ' +
      '(flags: --store=embedded, --people=N, --reuse, --explain, --seconds=S, --warmup=S, --shapes=a,b, --targets=e1,people, --concurrency=N, --no-load)',
    load: () => import('./search.js'),
  },
  startup: {
    summary: 'time to /readyz 200 of `npm start` as typed and of the compiled server alone (node dist/server.js), idle RSS and RSS after 10,000 mixed requests, embedded (existing data) and PostgreSQL, against a bare Fastify + PGlite/pg floor (flags: --rounds=N, --requests=N, --stores=embedded,postgres)',
    load: () => import('./startup.js'),
  },
  soak: {
    summary: 'a mixed workload (reads, searches, writes, participant moves, incentives, a 200-row import every 4 s) at concurrency 32 on PostgreSQL for 10 minutes (--quick: 60 s): p50/p99 and errors per operation, server RSS after warm-up vs at the end (flags: --seconds=N, --concurrency=N)',
    load: () => import('./soak.js'),
  },
  webhooks: {
    summary: 'webhook delivery from the compiled server on PostgreSQL to a loopback receiver: commit-to-receipt p50/p99 of single writes, and deliveries/s of a queued backlog against bare signed POSTs from this process (flags: --writes=N, --backlog=N)',
    load: () => import('./webhooks.js'),
  },
  messages: {
    summary: 'POST /studies/{id}/messages to 10,000 participants by filter, from the compiled server on PostgreSQL through a loopback smtp-server: request latency, messages/s, request → last delivery, against nodemailer sending straight (flags: --participants=N)',
    load: () => import('./messages.js'),
  },
  console: {
    summary: 'time to a usable console page (heading and first table row) in headless Chromium, cold and warm, p50, from the compiled server on the embedded store with the demo seed, against the floor of the bare index.html + assets (flags: --loads=N)',
    load: () => import('./console.js'),
  },
  'search-sql': {
    summary: 'every filter name of the OpenAPI document and every custom property through the SQL path (SEARCH_COUNTS=off) on the people, E1 and incentive searches, demo data freshly seeded, first answer and p50 against the unfiltered route, on both stores (flags: --stores=embedded,postgres, --rounds=N)',
    load: () => import('./search-sql.js'),
  },
  fairness: {
    summary: "another workspace's GET /v1/me p50/p99 alone and while one token runs template previews in loops, 16 concurrent 1000-row searches, a big CSV upload, and OpenAPI document loops, from the compiled server on the embedded store (and PostgreSQL with DATABASE_URL); aim p99 within 2x (flags: --seconds=N)",
    load: () => import('./fairness.js'),
  },
  screener: {
    summary:
      "the participant's pages under load from the compiled server on PostgreSQL: N invited people (default 2,000) at concurrency 64 open the screener, answer it, and sign the consent form; p50/p99 of each step against a static file of the page's size from the same server, errors, quota places counted exact, server peak RSS (flags: --people=N, --concurrency=N)",
    load: () => import('./screener.js'),
  },
  booking: {
    summary:
      'people booking sessions on their own page, from the compiled server on PostgreSQL: N participants (default 500) at concurrency 64 for 100 one-person sessions of two hosts, each opening the booking page and posting a time (again when taken meanwhile); p50/p99 of the page and of booking against a static file of the page\'s size, bookings counted exact (no double booking, no overlap), server peak RSS (flags: --people=N, --concurrency=N)',
    load: () => import('./booking.js'),
  },
  incentives: {
    summary:
      'POST /v1/incentives N times (default 10,000) at concurrency 32 to the compiled server on PostgreSQL, each ordered through the Tremendous adapter from the workspace\'s account to the Tremendous fake on loopback: orders/s, p50/p99 from request to the order at the fake, 0 double orders, server peak RSS (flags: --incentives=N, --concurrency=N)',
    load: () => import('./incentives.js'),
  },
  backfill: {
    summary:
      "POST /backfills of 1,000,000 participation rows (a panel's history) to the compiled server on PostgreSQL against COPY of the same rows into the same tables, peak RSS, then search counts by derived names exact against SQL (flags: --rows=N)",
    load: () => import('./backfill.js'),
  },
  import: {
    summary: 'POST /imports of 1,000,000 generated people (5 custom properties) to the compiled server on PostgreSQL against COPY of the same file (flags: --rows=N, --heap-cap=MiB, --profile; env BENCH_NODE_FLAGS for the server)',
    load: () => import('./import.js'),
  },
};

function usage(problem: string): never {
  process.stderr.write(`${problem}\n\nUsage: npm run bench -- NAME [--quick]\n\nAvailable benches:\n`);
  for (const [name, bench] of Object.entries(benches)) process.stderr.write(`  ${name.padEnd(8)} ${bench.summary}\n`);
  process.exit(2);
}

async function main() {
  const args = process.argv.slice(2);
  const name = args.find((arg) => !arg.startsWith('--'));
  if (!name) usage('No bench named.');
  const bench = Object.hasOwn(benches, name) ? benches[name] : undefined;
  if (!bench) usage(`Unknown bench "${name}".`);
  const flags = args.filter((arg) => arg !== name);
  const quick = flags.includes('--quick');
  const module = await bench.load();
  const result = await module.run({ quick, flags: flags.filter((flag) => flag !== '--quick') });
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});

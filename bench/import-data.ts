import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { createClock } from '../src/clock.js';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { importProperties } from '../src/families/properties/service.js';
import { createWorkspace } from '../src/families/workspaces/service.js';
import { processCpuMs } from './lib/cpu.js';
import type { BenchStore } from './lib/store.js';

/**
 * The import bench's data: a workspace with five custom person properties of varied types, a
 * CSV of generated people for them (written to a file as it is generated, the same bytes on
 * every run for a given row count), and the floor: PostgreSQL's own COPY of that file.
 */

const countries = ['United States', 'United Kingdom', 'Germany', 'France', 'Spain', 'Italy', 'Netherlands', 'Sweden', 'Canada', 'Australia'];
const firstNames = ['Ada', 'Alan', 'Grace', 'Edsger', 'Barbara', 'Donald', 'Frances', 'John', 'Margaret', 'Ken', 'Radia', 'Tim', 'Sophie', 'Linus', 'Hedy', 'Dennis'];
const lastNames = ['Lovelace', 'Turing', 'Hopper', 'Dijkstra', 'Liskov', 'Knuth', 'Allen', 'McCarthy', 'Hamilton', 'Thompson', 'Perlman', 'Berners-Lee', 'Wilson', 'Torvalds', 'Lamarr', 'Ritchie'];
const nicknames = ['the quick', 'night owl', 'early bird', 'Mx. "Careful"', 'power user, weekends', 'first-timer', 'the regular', 'fan of dark mode'];

/** The header of the generated file; the property columns name the workspace's properties. */
export const CSV_HEADER = ['email', 'firstName', 'lastName', 'phone', 'Country', 'Age', 'Signed up', 'Subscriber', 'Nickname'];

/**
 * The floor's table: the people table's types for the core columns, and each property's natural
 * PostgreSQL type (so COPY parses and checks the numbers, instants and booleans as the import
 * checks them). No index and no key: COPY's best case.
 */
const FLOOR_TABLE = `
  create table import_floor (
    email text not null,
    first_name text,
    last_name text,
    phone text,
    country text,
    age numeric,
    signed_up_at timestamptz,
    subscriber boolean,
    nickname text
  )`;

/**
 * A second, informational floor: the same COPY into a table with what `people` makes every
 * insert maintain: its key (filled by a default, as the CSV has no id), the unique index on
 * the lower-cased email, and its two sort-order indexes.
 */
const INDEXED_FLOOR_TABLE = `
  create table import_floor (
    workspace_id text not null default 'wsp_bench',
    person_id text not null default gen_random_uuid()::text,
    email text not null,
    first_name text,
    last_name text,
    phone text,
    country text,
    age numeric,
    signed_up_at timestamptz,
    subscriber boolean,
    nickname text,
    updated_at timestamptz not null default now(),
    last_contact_at timestamptz,
    primary key (workspace_id, person_id)
  );
  create unique index import_floor_email on import_floor (workspace_id, lower(email));
  create index import_floor_by_last_change on import_floor (workspace_id, updated_at, person_id);
  create index import_floor_by_last_contact on import_floor (workspace_id, last_contact_at, person_id)`;

const FLOOR_COLUMNS = 'email, first_name, last_name, phone, country, age, signed_up_at, subscriber, nickname';

/** A small deterministic generator, so every run writes the same file. */
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const quote = (text: string) => (/[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);

/**
 * Writes `rows` people to `file` in blocks, waiting for the file to drain, so memory stays flat
 * whatever the count. Every email is distinct (the import creates every row); some are mixed
 * case, some cells need quotes, a few optional cells are empty.
 */
export async function writePeopleCsv(file: string, rows: number): Promise<number> {
  const next = random(20261123);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
  const out = createWriteStream(file);
  const base = Date.UTC(2020, 0, 1);
  let bytes = 0;
  const write = async (text: string) => {
    bytes += Buffer.byteLength(text);
    if (!out.write(text)) await once(out, 'drain');
  };
  await write(`${CSV_HEADER.join(',')}\r\n`);
  const block = 5000;
  for (let start = 0; start < rows; start += block) {
    let text = '';
    for (let index = start; index < Math.min(rows, start + block); index++) {
      const first = pick(firstNames);
      const last = pick(lastNames);
      const local = `${first}.${last}.${index}`;
      const email = index % 5 === 0 ? `${local}@Example.org` : `${local}@example.org`.toLowerCase();
      const phone = next() < 0.8 ? `+1 555 ${String(Math.floor(next() * 10_000_000)).padStart(7, '0')}` : '';
      const signedUp = new Date(base + Math.floor(next() * 5 * 365 * 86_400_000)).toISOString().replace('.000Z', 'Z');
      const subscriber = next() < 0.5 ? 'true' : 'false';
      const nickname = next() < 0.7 ? quote(pick(nicknames)) : '';
      text += `${email},${first},${last},${phone},${pick(countries)},${18 + Math.floor(next() * 63)},${signedUp},${subscriber},${nickname}\r\n`;
    }
    await write(text);
  }
  out.end();
  await once(out, 'finish');
  return bytes;
}

export interface ImportSeed {
  workspaceId: string;
  token: string;
}

/** Migrates the store, then makes the workspace the import goes into, with the file's five properties. */
export async function seedImportBench(store: BenchStore): Promise<ImportSeed> {
  const database = await openDatabase(store.kind === 'postgres' ? { databaseUrl: store.databaseUrl } : { dataDir: store.dataDir });
  try {
    await migrateToLatest(database.db);
    const workspace = await createWorkspace(database.db, { name: 'Import bench', email: 'admin@import.bench.example', fullName: 'Import Admin' });
    const context = { db: database.db, clock: createClock(), workspaceId: workspace.workspaceId, userId: workspace.userId };
    const { errors } = await importProperties(context, [
      { name: 'Country', propertyType: 'SINGLE_SELECT', propertyOptions: countries.map((name) => ({ name })) },
      { name: 'Age', propertyType: 'NUMBER' },
      { name: 'Signed up', propertyType: 'DATETIME' },
      { name: 'Subscriber', propertyType: 'BOOLEAN' },
      { name: 'Nickname', propertyType: 'STRING' },
    ]);
    if (errors.length > 0) throw new Error(`The bench's properties were refused: ${JSON.stringify(errors)}`);
    return { workspaceId: workspace.workspaceId, token: workspace.token };
  } finally {
    await database.close();
  }
}

export interface FloorFigures {
  rows: number;
  seconds: number;
  /** CPU time of the PostgreSQL backend that ran the COPY, in milliseconds (NaN without /proc). */
  databaseCpuMs: number;
}

/**
 * The floor: the file streamed from disk through node-postgres into PostgreSQL's COPY FROM
 * STDIN, into a fresh plain table (a logged one, as `people` is), timed from the first byte read
 * to the COPY's end. `indexed`: the informational floor with people's key and indexes.
 */
export async function copyFloor(databaseUrl: string, file: string, kind: 'plain' | 'indexed'): Promise<FloorFigures> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('drop table if exists import_floor');
    await client.query(kind === 'plain' ? FLOOR_TABLE : INDEXED_FLOOR_TABLE);
    const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
    const pid = rows[0]!.pid;
    const cpuBefore = processCpuMs(pid);
    const started = performance.now();
    const copy = client.query(copyFrom(`copy import_floor (${FLOOR_COLUMNS}) from stdin with (format csv, header true)`));
    await pipeline(createReadStream(file, { highWaterMark: 256 * 1024 }), copy);
    const seconds = (performance.now() - started) / 1000;
    const cpuAfter = processCpuMs(pid);
    await client.query('drop table import_floor');
    return { rows: copy.rowCount, seconds, databaseCpuMs: cpuBefore === undefined || cpuAfter === undefined ? Number.NaN : cpuAfter - cpuBefore };
  } finally {
    await client.end();
  }
}

import { describe, expect, it } from 'vitest';
import { isTestOrMigration, writePatterns, writesIn, writesOutside } from '../../../test/one-writer.js';

/**
 * One writer per row: the people family is the only code that writes people rows and their
 * unique-value claims (see writer.ts). Another family calls the people family's functions, so
 * whatever must stay in step with a write of a person lives in one place. This test reads the
 * source under src/ and fails when code outside src/families/people/ writes either table, through
 * Kysely or in raw SQL. Migrations and test code (tests, fixtures, test support) may write them.
 */

const WRITES = writePatterns(['people', 'person_unique_values']);
const peopleWrites = (text: string) => writesIn(text, WRITES);

/**
 * Writers outside the family that predate the rule, each to move into the people family; the
 * count is of write statements in the file, so a new one there fails too, and moving one out
 * fails until this list shrinks.
 */
const KNOWN_EXCEPTIONS: Record<string, { writes: number; why: string }> = {
  'families/participants/queries.ts': { writes: 1, why: "recordContact moves people.last_contact_at when a participant is contacted" },
  'families/backfills/writer.ts': { writes: 1, why: "moves people.last_contact_at to a backfilled invitation's date, as recordContact does" },
  'seed/demo-people.ts': { writes: 2, why: 'the demo seed bulk-inserts people and their unique claims' },
};

describe('one writer per people row', () => {
  it('recognizes writes of people through Kysely and in raw SQL, and not reads or prose', () => {
    expect(peopleWrites(`db.insertInto('people').values(row)`)).toHaveLength(1);
    expect(peopleWrites(`db.updateTable("people as p").set({})`)).toHaveLength(1);
    expect(peopleWrites(`db.deleteFrom('person_unique_values')`)).toHaveLength(1);
    expect(peopleWrites('sql`insert into people (workspace_id) values (1)`')).toHaveLength(1);
    expect(peopleWrites('sql`UPDATE people SET email = null`')).toHaveLength(1);
    expect(peopleWrites('sql`delete from person_unique_values u using x`')).toHaveLength(1);
    expect(peopleWrites(`db.selectFrom('people').selectAll()`)).toEqual([]);
    expect(peopleWrites(`db.insertInto('people_export')`)).toEqual([]);
    expect(peopleWrites('sql`update participants set x = 1 from people p`')).toEqual([]);
    expect(peopleWrites('// then update people in the batch\n/* insert into people */')).toEqual([]);
  });

  it('finds no write of people or person_unique_values outside src/families/people/', () => {
    const found = writesOutside(WRITES, (relative) => relative.startsWith('families/people/') || isTestOrMigration(relative));
    const expected = Object.fromEntries(Object.entries(KNOWN_EXCEPTIONS).map(([file, exception]) => [file, exception.writes]));
    // A file here that is not a known exception writes people itself: call the people family
    // (src/families/people/writer.ts) instead.
    expect(found).toEqual(expected);
  });
});

import { describe, expect, it } from 'vitest';
import { isTestOrMigration, writePatterns, writesIn, writesOutside } from '../../../test/one-writer.js';

/**
 * One writer per row: the consent family is the only code that writes consent_submissions (see
 * writer.ts). The public signup route, a participant's consentFormSubmitted and the deletion
 * purge call the family's writer, so a consent's webhook event is never forgotten. This test
 * fails when code outside src/families/consent/ writes the table, through Kysely or in raw SQL.
 */

const WRITES = writePatterns(['consent_submissions']);

describe('one writer per consent submission', () => {
  it('recognizes writes of consent_submissions, and not reads', () => {
    expect(writesIn(`db.insertInto('consent_submissions').values(row)`, WRITES)).toHaveLength(1);
    expect(writesIn('sql`delete from consent_submissions where x`', WRITES)).toHaveLength(1);
    expect(writesIn(`db.selectFrom('consent_submissions as c')`, WRITES)).toEqual([]);
  });

  it('finds no write of consent_submissions outside src/families/consent/', () => {
    expect(writesOutside(WRITES, (relative) => relative.startsWith('families/consent/') || isTestOrMigration(relative))).toEqual({});
  });
});

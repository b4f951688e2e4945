import { describe, expect, it } from 'vitest';
import { isoFromPostgresTimestamp } from './database.js';

/** What a Date makes of PostgreSQL's text form: the conversion the fast path must agree with. */
const throughDate = (text: string) => new Date(`${text.replace(' ', 'T')}:00`).toISOString();

describe('isoFromPostgresTimestamp', () => {
  it('gives what a Date gives for every length of fraction, truncating past milliseconds', () => {
    const texts = [
      '2026-11-27 04:28:12+00',
      '2026-11-27 04:28:12.1+00',
      '2026-11-27 04:28:12.12+00',
      '2026-11-27 04:28:12.123+00',
      '2026-11-27 04:28:12.1239+00',
      '2026-11-27 04:28:12.99999+00',
      '2026-11-27 04:28:12.999999+00',
      '0001-01-01 00:00:00+00',
      '9999-12-31 23:59:59.999999+00',
    ];
    for (const text of texts) expect(isoFromPostgresTimestamp(text), text).toBe(throughDate(text));
    expect(isoFromPostgresTimestamp('2026-11-27 04:28:12.1239+00')).toBe('2026-11-27T04:28:12.123Z');
  });

  it('agrees with a Date on random instants', () => {
    for (let index = 0; index < 2000; index++) {
      const at = new Date(Math.floor(Math.random() * 253402300799999));
      const digits = Math.floor(Math.random() * 7);
      const micros = String(at.getUTCMilliseconds() * 1000 + Math.floor(Math.random() * 1000)).padStart(6, '0');
      const fraction = digits === 0 ? '' : `.${micros.slice(0, digits)}`;
      const text = `${at.toISOString().slice(0, 10)} ${at.toISOString().slice(11, 19)}${fraction}+00`;
      expect(isoFromPostgresTimestamp(text), text).toBe(throughDate(text));
    }
  });

  it('leaves other forms to a Date, and infinities as they are', () => {
    expect(isoFromPostgresTimestamp('2026-11-27 05:28:12.5+01')).toBe('2026-11-27T04:28:12.500Z');
    expect(isoFromPostgresTimestamp('2026-11-27 04:58:12+00:30')).toBe('2026-11-27T04:28:12.000Z');
    expect(isoFromPostgresTimestamp('infinity')).toBe('infinity');
    expect(isoFromPostgresTimestamp('-infinity')).toBe('-infinity');
  });
});

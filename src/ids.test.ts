import { describe, expect, it } from 'vitest';
import { newId } from './ids.js';

describe('newId', () => {
  it('is a prefix and a 26-character Crockford ULID', () => {
    expect(newId('stu')).toMatch(/^stu_[0-9A-HJKMNP-TV-Z]{26}$/);
  });

  it('strictly increases within a process, also many times in one millisecond', () => {
    const ids = Array.from({ length: 5000 }, () => newId('x', 1_800_000_000_000));
    const sorted = [...ids].sort();
    expect(ids).toEqual(sorted);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('orders by time first, and never goes back when the clock does', () => {
    const earlier = newId('x', 1_950_000_000_000);
    const later = newId('x', 1_950_000_000_001);
    expect(later > earlier).toBe(true);
    expect(later.slice(2, 12) > earlier.slice(2, 12)).toBe(true);
    const afterClockWentBack = newId('x', 1_900_000_000_000);
    expect(afterClockWentBack > later).toBe(true);
  });
});

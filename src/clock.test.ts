import { describe, expect, it } from 'vitest';
import { createClock, plusSeconds } from './clock.js';

describe('plusSeconds', () => {
  it('adds whole, fractional and negative seconds, answering ISO 8601 text in UTC', () => {
    const at = new Date('2026-12-31T23:59:30.000Z');
    expect(plusSeconds(at, 30)).toBe('2027-01-01T00:00:00.000Z');
    expect(plusSeconds(at, 0.25)).toBe('2026-12-31T23:59:30.250Z');
    expect(plusSeconds(at, -90)).toBe('2026-12-31T23:58:00.000Z');
    expect(at.toISOString()).toBe('2026-12-31T23:59:30.000Z');
  });
});

describe('createClock', () => {
  it('answers the time it was set to until reset', () => {
    const clock = createClock();
    clock.set(new Date('2027-03-01T00:00:00.000Z'));
    expect(clock.now().toISOString()).toBe('2027-03-01T00:00:00.000Z');
    clock.reset();
    expect(Math.abs(clock.now().getTime() - Date.now())).toBeLessThan(1000);
  });
});

/**
 * The service's notion of "now". Every time-based rule reads it, so tests (and the
 * TEST_HELPERS clock route) can move time without touching the system clock.
 */
export interface Clock {
  now(): Date;
  set(now: Date): void;
  reset(): void;
}

export function createClock(): Clock {
  let fixed: Date | undefined;
  return {
    now: () => (fixed ? new Date(fixed) : new Date()),
    set: (now) => {
      fixed = new Date(now);
    },
    reset: () => {
      fixed = undefined;
    },
  };
}

/** `at` plus `seconds` (fractions and negatives too), as the ISO 8601 text timestamps are stored and compared as. */
export function plusSeconds(at: Date, seconds: number): string {
  return new Date(at.getTime() + seconds * 1000).toISOString();
}

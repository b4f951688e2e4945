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

/**
 * The delay before the next try after try `attemptNumber` (1 for the first) failed, from a
 * schedule of base delays, each stretched or shrunk by up to 10% at random so that work failed
 * together does not return together; undefined when that was the schedule's last try. Webhook
 * deliveries and mail share this rule, each with its own schedule.
 */
export function jitteredDelaySeconds(schedule: readonly number[], attemptNumber: number, random: () => number = Math.random): number | undefined {
  const base = schedule[attemptNumber - 1];
  if (base === undefined) return undefined;
  return base * (0.9 + 0.2 * random());
}

import { jitteredDelaySeconds } from '../../clock.js';

/**
 * When a failed delivery is tried again: after the first attempt fails, 5 s; then 5 min, 30 min,
 * 2 h, 5 h, 10 h, 14 h, 20 h and 24 h, each stretched or shrunk by up to 10% at random so that
 * deliveries failed together do not return together. Ten attempts over about 3 days 3 hours
 * (272,105 s before jitter); after the tenth fails the delivery is FAILED. It can still be re-sent
 * by hand, and replayed.
 */
export const retryDelaysSeconds = [5, 300, 1_800, 7_200, 18_000, 36_000, 50_400, 72_000, 86_400] as const;

export const attemptsMax = retryDelaysSeconds.length + 1;

/** An endpoint whose every attempt has failed for this long is disabled, saying why. */
export const failingDaysBeforeDisabling = 5;

/**
 * Seconds until the next attempt after attempt `attemptNumber` (1 for the first) failed, or
 * undefined when that was the last one.
 */
export function retryDelaySeconds(attemptNumber: number, random: () => number = Math.random): number | undefined {
  return jitteredDelaySeconds(retryDelaysSeconds, attemptNumber, random);
}

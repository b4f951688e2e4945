import { readFileSync } from 'node:fs';

/** A process's resident memory now and its high-water mark, in bytes, from /proc; undefined where it cannot be read. */
export function processMemory(pid: number | undefined): { rss: number; highWaterMark: number } | undefined {
  if (pid === undefined) return undefined;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kilobytes = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
    return { rss: kilobytes('VmRSS'), highWaterMark: kilobytes('VmHWM') };
  } catch {
    return undefined;
  }
}

/**
 * Samples a process's resident memory every `everyMs` until stopped: the peak seen between start
 * and stop, so a process's start-up (or anything before the window) does not count.
 */
export function sampleMemory(pid: number | undefined, everyMs = 100) {
  let peak = 0;
  let samples = 0;
  const take = () => {
    const memory = processMemory(pid);
    if (!memory) return;
    samples++;
    peak = Math.max(peak, memory.rss);
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    stop(): { peakRss: number; samples: number } {
      clearInterval(timer);
      take();
      return { peakRss: peak, samples };
    },
  };
}

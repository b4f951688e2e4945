import { readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100;

/**
 * CPU time (user + system) a process has used so far, in milliseconds, from /proc; undefined
 * where /proc is missing. Per request, it is a figure a busy shared machine disturbs far less
 * than throughput.
 */
export function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is parenthesized and may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return ((utime + stime) * 1000) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** CPU time, in milliseconds, used so far by these processes together; undefined if none can be read. */
export function processesCpuMs(pids: number[]): number | undefined {
  const used = pids.map(processCpuMs).filter((value): value is number => value !== undefined);
  return used.length === 0 ? undefined : used.reduce((sum, value) => sum + value, 0);
}

export interface BenchOptions {
  /** Small data and short runs: the whole bench in under a minute. */
  quick: boolean;
  /** The bench's own flags, `--name` or `--name=value`. */
  flags: string[];
}

/** The figures a bench prints as its last line; `ratio` is 1.0 at the floor. */
export interface BenchResult {
  bench: string;
  quick: boolean;
  ratio: number;
  [figure: string]: unknown;
}

export function flagValue(flags: string[], name: string): string | undefined {
  const prefix = `--${name}=`;
  const found = flags.find((flag) => flag.startsWith(prefix));
  return found?.slice(prefix.length);
}

export function flagNumber(flags: string[], name: string, fallback: number): number {
  const value = flagValue(flags, name);
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0) throw new Error(`--${name} must be a positive number, got "${value}"`);
  return parsed;
}

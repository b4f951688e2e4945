import { useCallback, useEffect, useState } from 'preact/hooks';
import { describeProblem, type Problem } from './api.js';

export interface Loaded<T> {
  data: T | undefined;
  problem: Problem | undefined;
  loading: boolean;
  /** Loads again (after a change the page made). */
  reload(): void;
}

/**
 * Data for a page: runs `load` when `keys` change, keeps the last answer while the next loads,
 * and turns a failure into a Problem. An answer that arrives after the keys changed is dropped.
 */
export function useLoad<T>(load: () => Promise<T>, keys: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; problem: Problem | undefined; loading: boolean }>({ data: undefined, problem: undefined, loading: true });
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    let current = true;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => current && setState({ data, problem: undefined, loading: false }),
      (error: unknown) => current && setState((previous) => ({ data: previous.data, problem: describeProblem(error), loading: false })),
    );
    return () => {
      current = false;
    };
    // `load` is a new closure on each render; `keys` say when what it loads changes.
  }, [...keys, generation]);
  const reload = useCallback(() => setGeneration((value) => value + 1), []);
  return { ...state, reload };
}

/**
 * Keyset paging over the API's cursors: the cursor of the page shown, and the cursors of the pages
 * before it, so "Previous" goes back without the API paging backwards.
 */
export function useCursorPages(resetKeys: readonly unknown[]) {
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  useEffect(() => setCursors([undefined]), resetKeys);
  return {
    cursor: cursors[cursors.length - 1],
    pageNumber: cursors.length,
    next: (endCursor: string) => setCursors((previous) => [...previous, endCursor]),
    previous: () => setCursors((previous) => (previous.length > 1 ? previous.slice(0, -1) : previous)),
  };
}

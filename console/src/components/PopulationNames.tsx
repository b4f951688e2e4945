import { useEffect, useState } from 'preact/hooks';
import { describeProblem, type Problem, type RecruitClient } from '../api.js';
import { useSession } from '../session.js';

/**
 * The workspace's populations by id, read once per signed-in client (GET /populations, every
 * page) and shared by every row and page that names one: a table of 25 people asks once.
 */
const loaded = new WeakMap<RecruitClient, Promise<Map<string, string>>>();

function populationsOf(api: RecruitClient): Promise<Map<string, string>> {
  let names = loaded.get(api);
  if (!names) {
    names = (async () => {
      const found = new Map<string, string>();
      for await (const population of api.paginate('/populations', { params: { query: { size: 100 } } })) found.set(population.populationId, population.name);
      return found;
    })();
    // A failed read is tried again by the next page that needs it.
    names.catch(() => loaded.delete(api));
    loaded.set(api, names);
  }
  return names;
}

/** The names of populations, by their ids: a neutral placeholder while they load, never the ids. */
export function PopulationNames({ populationIds, empty = '—' }: { populationIds: readonly string[]; empty?: string }) {
  const { api } = useSession().session;
  const [names, setNames] = useState<Map<string, string> | undefined>();
  const [problem, setProblem] = useState<Problem | undefined>();
  useEffect(() => {
    let current = true;
    populationsOf(api).then(
      (found) => current && setNames(found),
      (error: unknown) => current && setProblem(describeProblem(error)),
    );
    return () => {
      current = false;
    };
  }, [api]);
  if (populationIds.length === 0) return <span class="muted">{empty}</span>;
  if (problem) return <span class="muted">The population names could not be loaded: {problem.summary}</span>;
  if (!names) return <span aria-busy="true">Loading…</span>;
  return <>{populationIds.map((id) => names.get(id) ?? 'a deleted population').join(', ')}</>;
}

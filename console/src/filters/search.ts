import { searchNames, unwrap } from '@recruit-ops/sdk/browser';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { type Loaded, useLoad } from '../hooks.js';
import { useSession } from '../session.js';
import { buildFilter, type BuiltFilter, type DraftGroup, type FilterProperty, filterProperties, newGroup, type PersonProperty, type PropertyGroup, type RootFilter } from './model.js';

export type Sort = NonNullable<RootFilter['sort']>;

/** A value that follows `value` once it has stayed the same for `delayMs`. */
export function useDebounced<T>(value: T, delayMs: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), delayMs);
    return () => clearTimeout(timer);
  }, [value, delayMs]);
  return settled;
}

/** The workspace's custom person properties (GET /properties, every page), and their property groups' names by id (GET /property-groups). */
export function useCustomProperties(): Loaded<{ properties: PersonProperty[]; groupNames: Map<string, string> }> {
  const { api } = useSession().session;
  return useLoad(async () => {
    const readProperties = async () => {
      const found: PersonProperty[] = [];
      let startCursor: string | undefined;
      // A workspace has tens of properties; ten pages of 100 is more than any has.
      for (let page = 0; page < 10; page++) {
        const answer = unwrap(await api.GET('/properties', { params: { query: { size: 100, ...(startCursor ? { startCursor } : {}) } } }));
        found.push(...answer.results);
        if (!answer.pageInfo.hasNextPage) break;
        startCursor = answer.pageInfo.endCursor;
      }
      return found;
    };
    // Without the groups the picker still works, under one heading for every custom property.
    const readGroups = async () => {
      const { data } = await api.GET('/property-groups');
      return new Map((data?.results ?? []).map((group) => [group.propertyGroupId, group.name]));
    };
    const [properties, groupNames] = await Promise.all([readProperties(), readGroups()]);
    return { properties, groupNames };
  }, [api]);
}

/** Whether `sort` names a property the API sorts by: a name of the group's list, or (PERSON) a custom property's id. */
export function isSortable(group: PropertyGroup, name: string): boolean {
  return searchNames[group].some((entry) => entry.name === name);
}

export const pageSizes = [25, 50, 100] as const;

export interface SearchPage<Row> {
  results: Row[];
  total: number;
  pageInfo: { hasNextPage: boolean; endCursor: string };
}

/** A search body: the filter (with the sort) and the page. */
export interface SearchBody {
  filter?: RootFilter;
  pageInfo: { size: number; startCursor?: string };
}

/**
 * The state of a search screen: the filter being edited, what it builds to, and the results of
 * the filter as it stood 300 ms after the last edit (an answer to an older filter is dropped), so
 * the total shown is the API's exact total of what is on screen. Sort and page size are sent to the
 * API; pages follow the API's cursors, from the first page again whenever the query changes.
 */
export function useFilterSearch<Row>(groups: readonly PropertyGroup[], run: (body: SearchBody) => Promise<SearchPage<Row>>, resetKeys: readonly unknown[] = []) {
  const custom = useCustomProperties();
  const properties: FilterProperty[] = useMemo(() => filterProperties(groups, custom.data?.properties ?? [], custom.data?.groupNames), [groups.join(), custom.data]);
  const byKey = useMemo(() => new Map(properties.map((property) => [property.key, property])), [properties]);
  const [root, setRoot] = useState<DraftGroup>(() => newGroup([]));
  const built: BuiltFilter = useMemo(() => buildFilter(root, byKey), [root, byKey]);
  const [sort, setSort] = useState<Sort | undefined>();
  const [size, setSize] = useState<number>(pageSizes[0]);

  const filterText = JSON.stringify(built.filter ?? null);
  const appliedFilterText = useDebounced(filterText, 300);
  const queryKey = JSON.stringify([appliedFilterText, sort, size, ...resetKeys]);
  const [pages, setPages] = useState<{ query: string; cursors: string[] }>({ query: queryKey, cursors: [] });
  // Cursors belong to the query they came from: a changed query starts again from its first page.
  const cursors = pages.query === queryKey ? pages.cursors : [];
  const cursor = cursors[cursors.length - 1];

  const results = useLoad(() => {
    const applied = JSON.parse(appliedFilterText) as RootFilter | null;
    const filter = applied || sort ? { ...(applied ?? { filters: [] }), ...(sort ? { sort } : {}) } : undefined;
    return run({ ...(filter ? { filter } : {}), pageInfo: { size, ...(cursor ? { startCursor: cursor } : {}) } });
  }, [queryKey, cursor]);

  return {
    properties,
    /** The workspace's custom properties as GET /properties gives them (a column reads a value by its type). */
    customProperties: custom.data?.properties,
    propertiesProblem: custom.problem,
    /** The API's refusal of the filter as it stands: none while an edited filter waits for its answer (its paths may have moved). */
    filterProblem: appliedFilterText === filterText ? results.problem : undefined,
    root,
    setRoot,
    built,
    /** Whether the results shown are for the filter as edited (not one still waiting for its debounce or answer). */
    settled: appliedFilterText === filterText && !results.loading,
    sort,
    setSort,
    size,
    setSize,
    results,
    pageNumber: cursors.length + 1,
    next: (endCursor: string) => setPages({ query: queryKey, cursors: [...cursors, endCursor] }),
    previous: () => setPages({ query: queryKey, cursors: cursors.slice(0, -1) }),
    /** The filter as edited, without the sort (a segment is a set, and refuses one), for saving it as a segment. */
    currentFilter: (): RootFilter => built.filter ?? { filters: [] },
  };
}

export type FilterSearch<Row> = ReturnType<typeof useFilterSearch<Row>>;

import { type Schema, unwrap } from '@recruit-ops/sdk/browser';
import type { RecruitClient } from './api.js';

export type Person = Schema<'Person'>;

/** The API's largest search page, and the most values an IN condition takes. */
const perSearch = 1000;

/**
 * The people of `personIds`, by id, from people searches on PERSON_ID IN the ids (one request for
 * up to 1000): a participant, an incentive or an event names its person by id only, and a row
 * shows their name and email. A person deleted since is not in the map.
 */
export async function loadPeopleByIds(api: RecruitClient, personIds: readonly string[]): Promise<Map<string, Person>> {
  const distinct = [...new Set(personIds)];
  const found = new Map<string, Person>();
  for (let start = 0; start < distinct.length; start += perSearch) {
    const ids = distinct.slice(start, start + perSearch);
    const page = unwrap(
      await api.POST('/people/search', {
        body: { filter: { filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'PERSON_ID' }, comparison: 'IN', value: ids }] }, pageInfo: { size: ids.length } },
      }),
    );
    for (const person of page.results) found.set(person.personId, person);
  }
  return found;
}

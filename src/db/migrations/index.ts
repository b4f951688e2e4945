import type { Migration } from 'kysely';
import * as foundation from './20261122000000_foundation.js';
import * as personProperties from './20261123000000_person_properties.js';
import * as jobs from './20261123000100_jobs.js';
import * as people from './20261123000200_people.js';
import * as imports from './20261123000400_imports.js';
import * as search from './20261123000500_search.js';

/** Every migration, in order. Names are timestamps so that branches merge without renumbering. */
export const migrations: Record<string, Migration> = {
  '20261122000000_foundation': foundation,
  '20261123000000_person_properties': personProperties,
  '20261123000100_jobs': jobs,
  '20261123000200_people': people,
  '20261123000400_imports': imports,
  '20261123000500_search': search,
};

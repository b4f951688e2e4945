import type { Catalogue } from '../search/catalogue.js';
import { comparisonsByType } from '../search/compile.js';
import { describePropertyNames, searchNameEntries } from '../search/names-doc.js';
import { filterSchemas, MAX_FILTERS, MAX_GROUP_LEVEL } from '../search/schemas.js';
import { incentiveNames } from './incentives/search-names.js';
import { participantNames } from './participants/search-names.js';
import { personNames } from './people/search-names.js';
import { segmentContext } from './segments/search-membership.js';

/**
 * The families' names joined into the one catalogue every search reads: PERSON the people's (with
 * the participation history and the segment membership they include), PARTICIPANT the
 * participants', INCENTIVE the incentives'. The engine (src/search/) is given it with each call.
 */
export const catalogue: Catalogue = {
  names: { PERSON: personNames, PARTICIPANT: participantNames, INCENTIVE: incentiveNames },
  loadContext: segmentContext,
};

/**
 * The filter grammar's schemas, RootFilter described by this catalogue's names: the one place the
 * OpenAPI document lists them, in words (the description) and as data for clients
 * (`x-search-names`, `x-comparisons`, `x-filter-limits`: the console's filter builder reads them
 * through the SDK).
 */
export const searchSchemas = filterSchemas(describePropertyNames(catalogue), {
  'x-search-names': searchNameEntries(catalogue),
  'x-comparisons': comparisonsByType,
  'x-filter-limits': { filters: MAX_FILTERS, groupLevel: MAX_GROUP_LEVEL },
});

import type { Catalogue } from '../search/catalogue.js';
import { describePropertyNames } from '../search/names-doc.js';
import { filterSchemas } from '../search/schemas.js';
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

/** The filter grammar's schemas, RootFilter described by this catalogue's names: the one place the OpenAPI document lists them. */
export const searchSchemas = filterSchemas(describePropertyNames(catalogue));

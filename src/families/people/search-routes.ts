import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { searchPageWeight } from '../../http/heavy-work.js';
import { requestContext, type ServiceDeps } from '../../context.js';
import { maskingNote } from '../../http/masking.js';
import { errorResponse } from '../../http/schemas.js';
import { catalogue } from '../search-catalogue.js';
import { searchPeople } from './search.js';
import { serverTiming } from '../../search/run.js';
import { pageJson, presentedAnswers, sendJson } from '../../http/serialization.js';
import { MAX_FILTERS, MAX_GROUP_LEVEL, searchBody } from '../../search/schemas.js';
import { PersonList } from './schemas.js';

export const SearchPeopleBody = searchBody({}, {});

const description = [
  'People of the panel matching `filter` (all of them without one), one keyset page at a time, with `total` the exact number of matches. Deleted people never appear.',
  `Filters follow the filter language: at most ${MAX_FILTERS} Filters counted through every level, FilterGroups nested at most ${MAX_GROUP_LEVEL} levels below the RootFilter.`,
  `PERSON names computed today: ${Object.keys(catalogue.names.PERSON).join(', ')}; custom person properties by \`{propertyId}\`. ` +
    'Every other name of the reference is refused with a 400 that says it cannot be computed yet; PARTICIPANT and INCENTIVE names need a study and are refused here.',
  'Semantics: EQUALS and IN on text are exact, except EMAIL which ignores case everywhere; CONTAINS and STARTS_WITH ignore case. ' +
    'Every negative comparison (NOT_EQUALS, NOT_CONTAINS, NOT_IN, NOT_IN_LAST_DAYS, IS_NONE_OF, HAS_NONE_OF, IS_NOT_EMPTY) is the exact complement of its positive one, so it also matches people without a value. ' +
    'Dates (YYYY-MM-DD) cover their UTC day: BEFORE is before the day, AFTER after it, BETWEEN [from, to] includes both; IN_LAST_DAYS n means from now minus n×24 h up to now, by the service clock. ' +
    'IS_FALSE matches an explicit false only. Text is empty when null or ""; a multi select when it has no option. POPULATION_MEMBERSHIP takes population ids (an unknown one is a 404) and sorts by the number of populations. ' +
    'WITHIN_KM measures great-circle distance from the location\'s lat/lng (a location without both never matches, whatever km); COUNTRY_IS compares its country code.',
  'Sort: any name above or (propertyGroup PERSON) a custom property id as propertyName; nulls last in both directions, ties broken by personId; the default is personId ascending. ' +
    'Paging through a result while people are added or removed shows no one twice and misses no one who matched throughout; a cursor is bound to its filter and sort (another\'s is a 400).',
  `Filtering or sorting on EMAIL, PHONE, NAME, FIRST_NAME, LAST_NAME or a property flagged isPII or isPHI needs the personal-data right (403 otherwise). ${maskingNote}`,
].join('\n\n');

/** POST /people/search: its own plugin, as the filter language grows apart from the people routes. */
export const peopleSearchRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  app.post(
    '/people/search',
    {
      ...presentedAnswers(app),
      config: { right: 'people:read', heavyWeight: searchPageWeight },
      // The body is optional as a whole: a bare POST searches everyone, first page.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        operationId: 'searchPeople',
        summary: 'Search people',
        description,
        tags: ['People'],
        body: SearchPeopleBody,
        response: {
          200: PersonList,
          400: errorResponse('Invalid filter, page size or cursor; `path` names the offending part, e.g. ["filter","filters","3","comparison"].'),
          404: errorResponse('A population named in a POPULATION_MEMBERSHIP filter does not exist; `path` names the value.'),
        },
      },
    },
    async (request, reply) => {
      const startedAt = performance.now();
      const { filter, pageInfo } = request.body;
      const found = await searchPeople(requestContext(deps, request), deps.cursors, filter, { startCursor: pageInfo?.startCursor, size: pageInfo?.size ?? 25 });
      void reply.header('server-timing', serverTiming(found.countedBy, startedAt, found.pagePath));
      return sendJson(reply, pageJson(found.results, found.total, found.pageInfo));
    },
  );
};

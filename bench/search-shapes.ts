import type { RootFilter } from '../src/search/schemas.js';
import type { SearchSeed } from './search-seed.js';

/** One query the search bench measures: a filter with its sort over the target study's participants. */
export interface SearchShape {
  key: string;
  description: string;
  filter: RootFilter;
}

/** The shapes of issue 4: every one sorted, each exercising a different part of the catalogue. */
export function searchShapes(seed: SearchSeed): SearchShape[] {
  const { properties } = seed;
  return [
    {
      key: 'a-select',
      description: 'custom select country IS_ANY_OF [US, GB], by LAST_CONTACT_DATE desc',
      filter: {
        filters: [{ property: { propertyId: properties.country }, comparison: 'IS_ANY_OF', value: ['US', 'GB'] }],
        sort: { operator: 'DESC', propertyGroup: 'PERSON', propertyName: 'LAST_CONTACT_DATE' },
      },
    },
    {
      key: 'b-status',
      description: 'PARTICIPANT.STATUS IS_ANY_OF [SCHEDULED], by PARTICIPANT.INTERVIEW_START_TIME asc',
      filter: {
        filters: [{ property: { propertyGroup: 'PARTICIPANT', propertyName: 'STATUS' }, comparison: 'IS_ANY_OF', value: ['SCHEDULED'] }],
        sort: { operator: 'ASC', propertyGroup: 'PARTICIPANT', propertyName: 'INTERVIEW_START_TIME' },
      },
    },
    {
      key: 'c-l90',
      description: 'TOTAL_NUMBER_OF_INTERVIEWS_COMPLETED_L90 LESS_THAN 2, by LAST_CONTACT_DATE desc',
      filter: {
        filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'TOTAL_NUMBER_OF_INTERVIEWS_COMPLETED_L90' }, comparison: 'LESS_THAN', value: 2 }],
        sort: { operator: 'DESC', propertyGroup: 'PERSON', propertyName: 'LAST_CONTACT_DATE' },
      },
    },
    {
      key: 'd-or',
      description: 'country IS_ANY_OF [DE] OR age >= 60, by LAST_CHANGED_AT desc',
      filter: {
        filters: [
          {
            operator: 'OR',
            filters: [
              { property: { propertyId: properties.country }, comparison: 'IS_ANY_OF', value: ['DE'] },
              { property: { propertyId: properties.age }, comparison: 'GREATER_THAN_OR_EQUAL', value: 60 },
            ],
          },
        ],
        sort: { operator: 'DESC', propertyGroup: 'PERSON', propertyName: 'LAST_CHANGED_AT' },
      },
    },
    {
      key: 'e-contains',
      description: 'occupation CONTAINS "engineer", by LAST_CHANGED_AT desc',
      filter: {
        filters: [{ property: { propertyId: properties.occupation }, comparison: 'CONTAINS', value: 'engineer' }],
        sort: { operator: 'DESC', propertyGroup: 'PERSON', propertyName: 'LAST_CHANGED_AT' },
      },
    },
    {
      key: 'f-perf-notes',
      description: 'STATUS IS_ANY_OF [INVITED] AND country IS_ANY_OF [US, GB], by LAST_CONTACT_DATE desc',
      filter: {
        filters: [
          { property: { propertyGroup: 'PARTICIPANT', propertyName: 'STATUS' }, comparison: 'IS_ANY_OF', value: ['INVITED'] },
          { property: { propertyId: properties.country }, comparison: 'IS_ANY_OF', value: ['US', 'GB'] },
        ],
        sort: { operator: 'DESC', propertyGroup: 'PERSON', propertyName: 'LAST_CONTACT_DATE' },
      },
    },
    {
      key: 'g-email',
      description: 'PERSON.EMAIL CONTAINS "garcia", by PERSON.EMAIL asc',
      filter: {
        filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'EMAIL' }, comparison: 'CONTAINS', value: 'garcia' }],
        sort: { operator: 'ASC', propertyGroup: 'PERSON', propertyName: 'EMAIL' },
      },
    },
  ];
}

import type { RootFilter } from '../src/search/schemas.js';
import type { SearchSeed } from './search-seed.js';

/** One query the search bench measures: a filter with its sort over the target study's participants. */
export interface SearchShape {
  key: string;
  description: string;
  filter: RootFilter;
}

/**
 * Whether a shape names a PARTICIPANT property (in its filter, at any level, or its sort): such a
 * shape needs a study, so POST /people/search refuses it and the bench measures it on E1 only.
 */
export function namesParticipant(shape: SearchShape): boolean {
  const visit = (items: RootFilter['filters']): boolean =>
    items.some((item) => ('filters' in item ? visit(item.filters) : 'propertyGroup' in item.property && item.property.propertyGroup === 'PARTICIPANT'));
  return visit(shape.filter.filters) || shape.filter.sort?.propertyGroup === 'PARTICIPANT';
}

/** The shapes of issue 4 (a–g) and three more (h–j): every one sorted, each exercising a different part of the catalogue. */
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
    {
      key: 'h-nested',
      description:
        'CONTACT_STATUS IS_ANY_OF [CONTACTABLE] AND ((STATUS IS_ANY_OF [INVITED, SCHEDULED] AND country IS_ANY_OF [US, CA, GB]) OR ' +
        '(STATUS IS_ANY_OF [NOT_STARTED] AND age >= 30 AND newsletter IS_TRUE)), by LAST_CONTACT_DATE desc',
      filter: {
        operator: 'AND',
        filters: [
          { property: { propertyGroup: 'PERSON', propertyName: 'CONTACT_STATUS' }, comparison: 'IS_ANY_OF', value: ['CONTACTABLE'] },
          {
            operator: 'OR',
            filters: [
              {
                operator: 'AND',
                filters: [
                  { property: { propertyGroup: 'PARTICIPANT', propertyName: 'STATUS' }, comparison: 'IS_ANY_OF', value: ['INVITED', 'SCHEDULED'] },
                  { property: { propertyId: properties.country }, comparison: 'IS_ANY_OF', value: ['US', 'CA', 'GB'] },
                ],
              },
              {
                operator: 'AND',
                filters: [
                  { property: { propertyGroup: 'PARTICIPANT', propertyName: 'STATUS' }, comparison: 'IS_ANY_OF', value: ['NOT_STARTED'] },
                  { property: { propertyId: properties.age }, comparison: 'GREATER_THAN_OR_EQUAL', value: 30 },
                  { property: { propertyId: properties.newsletter }, comparison: 'IS_TRUE' },
                ],
              },
            ],
          },
        ],
        sort: { operator: 'DESC', propertyGroup: 'PERSON', propertyName: 'LAST_CONTACT_DATE' },
      },
    },
    {
      key: 'i-multi-date',
      description: 'devices HAS_ALL_OF [iPhone, Mac] AND last purchase IN_LAST_DAYS 365, by LAST_CHANGED_AT desc',
      filter: {
        filters: [
          { property: { propertyId: properties.devices }, comparison: 'HAS_ALL_OF', value: ['iPhone', 'Mac'] },
          { property: { propertyId: properties.lastPurchaseAt }, comparison: 'IN_LAST_DAYS', value: 365 },
        ],
        sort: { operator: 'DESC', propertyGroup: 'PERSON', propertyName: 'LAST_CHANGED_AT' },
      },
    },
    {
      key: 'j-geo-range',
      description: 'home WITHIN_KM 50 of central London AND age BETWEEN [25, 44], by age asc (a custom sort)',
      filter: {
        filters: [
          { property: { propertyId: properties.home }, comparison: 'WITHIN_KM', value: { lat: 51.5074, lng: -0.1278, km: 50 } },
          { property: { propertyId: properties.age }, comparison: 'BETWEEN', value: [25, 44] },
        ],
        sort: { operator: 'ASC', propertyGroup: 'PERSON', propertyName: properties.age },
      },
    },
  ];
}

import { type Static, type TProperties, Type } from '@sinclair/typebox';
import { CHECKED_BY_OPERATION } from '../http/validation.js';
import { propertyGroups } from './names.js';

/** Every comparison of the filter language (contract §2); which fit a property depends on its type. */
export const comparisons = [
  'EQUALS', 'NOT_EQUALS', 'CONTAINS', 'NOT_CONTAINS', 'STARTS_WITH', 'IN', 'NOT_IN',
  'GREATER_THAN', 'GREATER_THAN_OR_EQUAL', 'LESS_THAN', 'LESS_THAN_OR_EQUAL', 'BETWEEN',
  'BEFORE', 'AFTER', 'ON', 'IN_LAST_DAYS', 'NOT_IN_LAST_DAYS',
  'IS_TRUE', 'IS_FALSE',
  'IS_ANY_OF', 'IS_NONE_OF',
  'HAS_ANY_OF', 'HAS_ALL_OF', 'HAS_NONE_OF',
  'WITHIN_KM', 'COUNTRY_IS',
  'IS_EMPTY', 'IS_NOT_EMPTY',
] as const;
export type Comparison = (typeof comparisons)[number];

export const MAX_FILTERS = 50;
/** The RootFilter is level 0; a FilterGroup at this level is the deepest allowed. */
export const MAX_GROUP_LEVEL = 4;

const operator = Type.Union([Type.Literal('AND'), Type.Literal('OR')], { default: 'AND' });

const NamedProperty = Type.Object(
  {
    propertyGroup: Type.Union(propertyGroups.map((group) => Type.Literal(group))),
    propertyName: Type.String({ minLength: 1, maxLength: 200, description: "One of the reference's names of the group (PERSON names are listed in this operation's description)." }),
  },
  { additionalProperties: false },
);
const CustomProperty = Type.Object(
  { propertyId: Type.String({ minLength: 1, maxLength: 200, description: 'The id of a custom person property.' }) },
  { additionalProperties: false },
);

/**
 * Either shape. Written as if/then/else rather than anyOf so that a mistake is reported inside
 * the shape the client meant (its path), not as "matches neither".
 */
export const PropertyRef = Type.Unsafe<Static<typeof NamedProperty> | Static<typeof CustomProperty>>({
  $id: 'PropertyRef',
  title: 'PropertyRef',
  description: '`{propertyGroup, propertyName}` for a named property, or `{propertyId}` for a custom person property.',
  if: { type: 'object', required: ['propertyId'], properties: { propertyId: {} } },
  then: CustomProperty,
  else: NamedProperty,
});

export const Filter = Type.Object(
  {
    property: Type.Ref(PropertyRef),
    // Checked by the search itself (compile.ts), which knows the property's type: a comparison
    // that is none, or that does not fit, is one error listing the comparisons of that type.
    comparison: Type.Unsafe<Comparison>({
      type: 'string',
      enum: [...comparisons],
      [CHECKED_BY_OPERATION]: true,
      description: "Which comparisons fit depends on the property's type (the RootFilter schema's `x-comparisons` lists them by type); any other is refused with a 400 that lists those of the property's type.",
    }),
    value: Type.Optional(Type.Unknown({ description: "Depends on the comparison and the property's type; absent for IS_TRUE, IS_FALSE, IS_EMPTY, IS_NOT_EMPTY." })),
  },
  { $id: 'Filter', title: 'Filter', additionalProperties: false },
);
export type Filter = Static<typeof Filter>;

export interface FilterGroup {
  operator?: 'AND' | 'OR';
  filters: (Filter | FilterGroup)[];
}

/** A Filter, or a FilterGroup (recognised by its `filters`). */
const FilterOrGroup = Type.Unsafe<Filter | FilterGroup>({
  if: { type: 'object', required: ['filters'], properties: { filters: {} } },
  then: { $ref: 'FilterGroup' },
  else: { $ref: 'Filter' },
});

export const FilterGroup = Type.Unsafe<FilterGroup>(
  Type.Object(
    { operator: Type.Optional(operator), filters: Type.Array(FilterOrGroup, { maxItems: MAX_FILTERS }) },
    { $id: 'FilterGroup', title: 'FilterGroup', additionalProperties: false },
  ),
);

export const Sort = Type.Object(
  {
    operator: Type.Union([Type.Literal('ASC'), Type.Literal('DESC')]),
    propertyGroup: Type.Union(propertyGroups.map((group) => Type.Literal(group))),
    propertyName: Type.String({ minLength: 1, maxLength: 200, description: 'A name of the group, or (group PERSON) the id of a custom person property.' }),
  },
  { $id: 'Sort', title: 'Sort', additionalProperties: false },
);
export type Sort = Static<typeof Sort>;

/** A filter as the documents show it. */
export const exampleRootFilter = {
  operator: 'AND',
  filters: [
    { property: { propertyGroup: 'PERSON', propertyName: 'CONTACT_STATUS' }, comparison: 'IS_ANY_OF', value: ['CONTACTABLE'] },
    {
      operator: 'OR',
      filters: [
        { property: { propertyId: 'prp_01JD0000000000000000000000' }, comparison: 'GREATER_THAN_OR_EQUAL', value: 18 },
        { property: { propertyGroup: 'PERSON', propertyName: 'IMPORT_DATE' }, comparison: 'IN_LAST_DAYS', value: 30 },
      ],
    },
  ],
  sort: { operator: 'DESC', propertyGroup: 'PERSON', propertyName: 'LAST_CHANGED_AT' },
};

/**
 * The RootFilter schema. Its description lists the names a filter may use, which the families
 * define: it is given (describePropertyNames over their catalogue) by whoever registers the
 * schemas, src/families/search-catalogue.ts, since the engine imports no family.
 */
const rootFilterSchema = (description: string, extensions: Record<string, unknown>) =>
  Type.Object(
    {
      operator: Type.Optional(operator),
      filters: Type.Array(FilterOrGroup, { maxItems: MAX_FILTERS, description: `Filters and FilterGroups; at most ${MAX_FILTERS} Filters counted through every level, groups nested at most ${MAX_GROUP_LEVEL} deep.` }),
      sort: Type.Optional(Type.Ref(Sort)),
    },
    {
      $id: 'RootFilter',
      title: 'RootFilter',
      description,
      additionalProperties: false,
      examples: [exampleRootFilter],
      ...extensions,
    },
  );
export type RootFilter = Static<ReturnType<typeof rootFilterSchema>>;

/**
 * The filter grammar's schemas, registered with the app once: RootFilter described as
 * `rootFilterDescription` says, carrying `extensions` (`x-…` keys the document keeps for clients:
 * the names and comparisons in a structure, which the SDK generates into code).
 */
export const filterSchemas = (rootFilterDescription: string, extensions: Record<`x-${string}`, unknown> = {}) => [
  PropertyRef,
  Filter,
  FilterGroup,
  Sort,
  rootFilterSchema(rootFilterDescription, extensions),
];

/** A RootFilter in a body: a reference to the registered schema (filterSchemas). */
export const rootFilterRef = (options: { description?: string } = {}) => Type.Unsafe<RootFilter>({ ...options, $ref: 'RootFilter' });

/** The pageInfo of a search request: keyset cursors, pages of 1–1000 (default 25). */
export const SearchPageInfo = Type.Object(
  {
    startCursor: Type.Optional(Type.String({ minLength: 1, maxLength: 4000, description: 'The endCursor of the previous page of the same query.' })),
    size: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 25, description: 'Items per page, 1–1000.' })),
  },
  { additionalProperties: false },
);

/** The body of a search route: an optional filter, the route's own fields, and paging. */
export function searchBody<Extra extends TProperties>(extra: Extra, example: Record<string, unknown>) {
  return Type.Object(
    { filter: Type.Optional(rootFilterRef()), ...extra, pageInfo: Type.Optional(SearchPageInfo) },
    { additionalProperties: false, examples: [{ filter: exampleRootFilter, ...example, pageInfo: { size: 25 } }] },
  );
}

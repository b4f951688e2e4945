import { type Static, Type } from '@sinclair/typebox';
import { paged, Text } from '../../http/schemas.js';

// A string enum rather than a union of literals: Ajv reports a bad value of an anyOf once per
// branch, which would give the client one error item per allowed value instead of one.
const literals = <T extends string>(values: readonly T[], description?: string) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...(description === undefined ? {} : { description }) });

export const propertyTypes = ['STRING', 'NUMBER', 'DATETIME', 'BOOLEAN', 'SINGLE_SELECT', 'MULTI_SELECT', 'LOCATION'] as const;
/** The types whose properties have options. */
export const selectTypes = ['SINGLE_SELECT', 'MULTI_SELECT'] as const;
/** The types whose values can be told apart one person from another, so that uniqueness means something. */
export const uniqueableTypes = ['STRING', 'NUMBER', 'DATETIME'] as const;
export const optionColors = ['GREEN', 'YELLOW', 'BLUE', 'GREY', 'RED', 'ORANGE', 'PURPLE', 'PINK'] as const;
export const scopeTypes = ['ALL', 'SPECIFIC'] as const;

/** At most this many properties of a workspace may be unique (the reference's limit). */
export const uniquePropertiesMax = 10;

export const PropertyType = literals(propertyTypes);
export const OptionColor = literals(optionColors, 'The full set of option colors.');
export const ScopeType = literals(scopeTypes, 'ALL: the group applies to every population; SPECIFIC: only to its populationIds.');

const Id = (description?: string) => Type.String({ minLength: 1, maxLength: 200, ...(description === undefined ? {} : { description }) });

export const PropertyOption = Type.Object(
  {
    propertyOptionId: Type.String(),
    name: Type.String(),
    color: OptionColor,
    order: Type.String({ pattern: '^(0|[1-9][0-9]*)$', description: "The option's position in its property, from \"0\", as a string holding a number." }),
  },
  { $id: 'PropertyOption', title: 'PropertyOption', examples: [{ propertyOptionId: 'pro_01JD0000000000000000000000', name: 'Weekly', color: 'GREEN', order: '0' }] },
);

const examplePersonProperty = {
  propertyId: 'prp_01JD0000000000000000000000',
  name: 'Shopping frequency',
  propertyType: 'SINGLE_SELECT',
  propertyOptions: [
    { propertyOptionId: 'pro_01JD0000000000000000000000', name: 'Weekly', color: 'GREEN', order: '0' },
    { propertyOptionId: 'pro_01JD0000000000000000000001', name: 'Monthly', color: 'YELLOW', order: '1' },
  ],
  isUnique: false,
  isPHI: false,
  isPII: false,
  description: 'How often the person shops online',
  propertyGroupId: 'prg_01JD0000000000000000000000',
  editableByPerson: true,
};

export const PersonProperty = Type.Object(
  {
    propertyId: Type.String(),
    name: Type.String({ description: 'Unique in the workspace, case-insensitively.' }),
    propertyType: PropertyType,
    propertyOptions: Type.Array(Type.Ref(PropertyOption), { description: 'In their order; empty for types other than SINGLE_SELECT and MULTI_SELECT.' }),
    isUnique: Type.Boolean({ description: 'No two people may hold the same value; at most 10 such properties per workspace.' }),
    isPHI: Type.Boolean({ description: 'Holds protected health information.' }),
    isPII: Type.Boolean({ description: 'Holds personally identifiable information.' }),
    description: Type.String({ description: 'Empty when none was given.' }),
    propertyGroupId: Type.String({ description: "The one group the property is in: the one given at import, or the workspace's default group." }),
    editableByPerson: Type.Boolean({ description: "The person may change their own value of it on their page (GET /me): an edit there goes through the same checks as PATCH /people/{personId}. A LOCATION property is never shown there." }),
  },
  { $id: 'PersonProperty', title: 'PersonProperty', description: "A field of the workspace's own on people.", examples: [examplePersonProperty] },
);
export type PersonProperty = Static<typeof PersonProperty>;

export const PropertyList = paged(Type.Ref(PersonProperty), 'PersonPropertyList', examplePersonProperty);

const examplePropertyGroup = {
  propertyGroupId: 'prg_01JD0000000000000000000000',
  name: 'Shopping habits',
  scopeType: 'SPECIFIC',
  populationIds: ['pop_01JD0000000000000000000000'],
  propertyIds: ['prp_01JD0000000000000000000000'],
  isDefault: false,
};

export const PropertyGroup = Type.Object(
  {
    propertyGroupId: Type.String(),
    name: Type.String(),
    scopeType: ScopeType,
    populationIds: Type.Array(Type.String(), { description: 'The populations a SPECIFIC group applies to, in the order they were made; empty for ALL.' }),
    propertyIds: Type.Array(Type.String(), { description: "The group's properties, in the order they were made." }),
    isDefault: Type.Boolean({
      description: "true for the workspace's default group (scope ALL), made the first time a property is imported without a propertyGroupId.",
    }),
  },
  { $id: 'PropertyGroup', title: 'PropertyGroup', examples: [examplePropertyGroup] },
);

export const PropertyGroupList = Type.Object(
  { results: Type.Array(Type.Ref(PropertyGroup), { description: 'In the order the groups were made; not paged.' }) },
  { title: 'PropertyGroupList', examples: [{ results: [examplePropertyGroup] }] },
);

export const OptionInput = Type.Object(
  {
    name: Text({ minLength: 1, maxLength: 200, description: 'Unique within the property, case-insensitively.' }),
    color: Type.Optional(literals(optionColors, 'Defaults to the colors in turn, by position: GREEN, YELLOW, BLUE, GREY, RED, ORANGE, PURPLE, PINK.')),
  },
  { additionalProperties: false },
);

export const ImportItem = Type.Object(
  {
    name: Text({ minLength: 1, maxLength: 200, description: 'Unique in the workspace, case-insensitively.' }),
    propertyType: PropertyType,
    propertyOptions: Type.Optional(
      Type.Array(OptionInput, { maxItems: 100, description: 'Only for SINGLE_SELECT and MULTI_SELECT (another type makes the item an error); in their order.' }),
    ),
    isUnique: Type.Optional(Type.Boolean({ default: false, description: 'Only for STRING, NUMBER and DATETIME; at most 10 unique properties per workspace.' })),
    isPHI: Type.Optional(Type.Boolean({ default: false })),
    isPII: Type.Optional(Type.Boolean({ default: false })),
    description: Type.Optional(Text({ maxLength: 5000 })),
    propertyGroupId: Type.Optional(Id("The group to put the property in; without it, the workspace's default group (scope ALL).")),
    editableByPerson: Type.Optional(Type.Boolean({ default: false, description: 'The person may change their own value on their page (GET /me).' })),
  },
  { additionalProperties: false },
);
export type ImportItem = Static<typeof ImportItem>;

export const ImportBody = Type.Array(ImportItem, {
  minItems: 1,
  maxItems: 10,
  description: 'One to ten properties. Each is checked on its own: the ones that pass are created together, the others are reported in `errors`.',
  examples: [
    [
      { name: 'Shopping frequency', propertyType: 'SINGLE_SELECT', propertyOptions: [{ name: 'Weekly', color: 'GREEN' }, { name: 'Monthly', color: 'YELLOW' }] },
      { name: 'Customer number', propertyType: 'STRING', isUnique: true, isPII: true, description: 'From the CRM' },
    ],
  ],
});

export const ImportResult = Type.Object(
  {
    results: Type.Array(
      Type.Object({
        personProperty: Type.Ref(PersonProperty),
        isAsync: Type.Boolean({ description: 'Always false: properties are created before the response.' }),
        bulkActionUserRequestId: Type.String({ description: 'Identifies this import request: the same for every item of one request.' }),
      }),
      { description: 'The created properties, in the order of the request.' },
    ),
    errors: Type.Array(
      Type.Object({
        message: Type.String(),
        path: Type.Array(Type.String(), { description: 'The index of the item in the request (as a string), then the offending field.' }),
        name: Type.String({ description: "The item's name." }),
      }),
      { description: 'One entry for each rule an item breaks; such an item is not created.' },
    ),
  },
  {
    title: 'PropertyImportResult',
    examples: [
      {
        results: [{ personProperty: examplePersonProperty, isAsync: false, bulkActionUserRequestId: 'bar_01JD0000000000000000000000' }],
        errors: [{ message: 'A property with this name already exists', path: ['1', 'name'], name: 'Customer number' }],
      },
    ],
  },
);

export const PropertyParams = Type.Object({ propertyId: Id() });

export const UpdatePropertyBody = Type.Object(
  {
    editableByPerson: Type.Optional(Type.Boolean({ description: 'The person may change their own value on their page (GET /me).' })),
    description: Type.Optional(Text({ maxLength: 5000 })),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ editableByPerson: true }] },
);
export type UpdatePropertyBody = Static<typeof UpdatePropertyBody>;
export const PropertyGroupParams = Type.Object({ propertyGroupId: Id() });

export const DeletePropertiesBody = Type.Object(
  {
    propertyIds: Type.Array(Id(), { minItems: 1, maxItems: 100, uniqueItems: true, description: 'One to one hundred distinct property ids.' }),
  },
  { additionalProperties: false, examples: [{ propertyIds: ['prp_01JD0000000000000000000000', 'prp_01JD0000000000000000000001'] }] },
);

export const DeletePropertiesResult = Type.Object(
  {
    deleted: Type.Array(Type.String(), { description: 'The ids deleted, in the order of the request.' }),
    errors: Type.Array(Type.Object({ message: Type.String(), path: Type.Array(Type.String()) }), { description: 'One entry for each id that was not deleted.' }),
  },
  {
    title: 'PropertyDeletionResult',
    examples: [{ deleted: ['prp_01JD0000000000000000000000'], errors: [{ message: 'Property not found', path: ['propertyIds', '1'] }] }],
  },
);

export const DeletePropertyResult = Type.Object(
  { message: Type.String() },
  { title: 'PropertyDeleted', examples: [{ message: 'Property deleted' }] },
);

export const PropertyGroupsQuery = Type.Object(
  { populationId: Type.Optional(Id('Only the groups that apply to this population: scope ALL, and SPECIFIC groups that name it.')) },
  { additionalProperties: false },
);

export const CreatePropertyGroupBody = Type.Object(
  {
    name: Text({ minLength: 1, maxLength: 200, description: 'Need not be unique.' }),
    scopeType: ScopeType,
    populationIds: Type.Optional(
      Type.Array(Id(), { maxItems: 100, uniqueItems: true, description: 'At least one for SPECIFIC; none for ALL.' }),
    ),
    propertyIds: Type.Optional(
      Type.Array(Id(), { maxItems: 1000, uniqueItems: true, description: 'Properties to move into the group (a property is in one group only).' }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ name: 'Shopping habits', scopeType: 'SPECIFIC', populationIds: ['pop_01JD0000000000000000000000'], propertyIds: ['prp_01JD0000000000000000000000'] }],
  },
);
export type CreatePropertyGroupBody = Static<typeof CreatePropertyGroupBody>;

export const propertySchemas = [PropertyOption, PersonProperty, PropertyGroup];

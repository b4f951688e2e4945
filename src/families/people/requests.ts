import { type Static, Type } from '@sinclair/typebox';
import { KeyedRecord, Text } from '../../http/schemas.js';

const Email = (description?: string) => Type.String({ format: 'email', maxLength: 320, description, examples: ['grace@example.org'] });
const Phone = Text({ minLength: 1, maxLength: 40 });
const Name = Text({ minLength: 1, maxLength: 200 });
const nullable = <T extends ReturnType<typeof Text>>(schema: T) => Type.Union([schema, Type.Null()]);

/** A property id as a key of `properties`: an unknown id is a 404 (the service looks it up), an over-long one a 400. */
export const propertyIdKey = { minLength: 1, maxLength: 100 };

const propertiesDescription =
  'Custom property values by property id, each checked against its property type (STRING text; NUMBER a number; DATETIME an ISO 8601 date-time, stored in UTC; BOOLEAN; SINGLE_SELECT one option name; MULTI_SELECT an array of option names; LOCATION {country, address?, city?, region?, postalCode?, lat?, lng?}). Select values are stored and returned as option names. An unknown property id is a 404, a value of the wrong shape a 400, a value of a unique property that another person has a 409; each names ["properties", propertyId].';

export const CreatePersonBody = Type.Object(
  {
    email: Email('Unique in the workspace among people not deleted, compared case-insensitively.'),
    firstName: Type.Optional(Name),
    lastName: Type.Optional(Name),
    phone: Type.Optional(Phone),
    additionalEmails: Type.Optional(Type.Array(Email(), { maxItems: 20 })),
    additionalPhones: Type.Optional(Type.Array(Phone, { maxItems: 20 })),
    populationIds: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100, description: 'Populations the person joins; each must exist (404 naming its index).' })),
    properties: Type.Optional(KeyedRecord(propertyIdKey, Type.Unknown(), { maxProperties: 200, description: propertiesDescription })),
  },
  { additionalProperties: false, examples: [{ email: 'grace@example.org', firstName: 'Grace', lastName: 'Hopper', populationIds: ['pop_01JD0000000000000000000000'] }] },
);
export type CreatePersonBody = Static<typeof CreatePersonBody>;

export const UpdatePersonBody = Type.Object(
  {
    email: Type.Optional(Email('Unique in the workspace, case-insensitively.')),
    firstName: Type.Optional(nullable(Name)),
    lastName: Type.Optional(nullable(Name)),
    phone: Type.Optional(nullable(Phone)),
    additionalEmails: Type.Optional(Type.Array(Email(), { maxItems: 20 })),
    additionalPhones: Type.Optional(Type.Array(Phone, { maxItems: 20 })),
    populationIds: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100, description: "Replaces the person's memberships with exactly these populations." }),
    ),
    properties: Type.Optional(
      KeyedRecord(propertyIdKey, Type.Unknown(), { maxProperties: 200, description: `Merged key by key into the stored values; null removes a value. ${propertiesDescription}` }),
    ),
  },
  { additionalProperties: false, examples: [{ lastName: 'Hopper-Smith', properties: { prp_01JD0000000000000000000000: null } }] },
);
export type UpdatePersonBody = Static<typeof UpdatePersonBody>;

export const DeletePeopleBody = Type.Object(
  {
    emails: Type.Optional(Type.Array(Type.String({ maxLength: 320 }), { maxItems: 1000 })),
    personIds: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 1000 })),
  },
  { additionalProperties: false, examples: [{ emails: ['grace@example.org'], personIds: ['per_01JD0000000000000000000000'] }] },
);
export type DeletePeopleBody = Static<typeof DeletePeopleBody>;

export const PeopleDeleted = Type.Object(
  { personsDeletedCount: Type.Integer({ description: 'People deleted by this request (people already deleted or unknown are not counted).' }) },
  { examples: [{ personsDeletedCount: 1 }] },
);

export const OptedOutBody = Type.Object({ isOptedOut: Type.Boolean() }, { additionalProperties: false, examples: [{ isOptedOut: true }] });

export const OptedOutStatus = Type.Object(
  { personId: Type.String(), email: Type.String(), isOptedOut: Type.Boolean() },
  { examples: [{ personId: 'per_01JD0000000000000000000000', email: 'grace@example.org', isOptedOut: true }] },
);

export const PersonIdParams = Type.Object({ personId: Type.String({ minLength: 1, maxLength: 100 }) });

export const PersonIdOrEmailParams = Type.Object({
  personIdOrEmail: Type.String({ minLength: 1, maxLength: 320, description: 'A person id, or an email address (a valid email is looked up as one, case-insensitively).' }),
});

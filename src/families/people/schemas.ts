import { Type } from '@sinclair/typebox';
import { PageInfo } from '../../http/schemas.js';

export const contactStatuses = ['CONTACTABLE', 'OPTED_OUT', 'UNREACHABLE'] as const;

export const PersonLocation = Type.Object(
  {
    address: Type.Optional(Type.String({ maxLength: 500 })),
    city: Type.Optional(Type.String({ maxLength: 200 })),
    region: Type.Optional(Type.String({ maxLength: 200 })),
    postalCode: Type.Optional(Type.String({ maxLength: 40 })),
    country: Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2 code.' }),
    lat: Type.Optional(Type.Number({ minimum: -90, maximum: 90 })),
    lng: Type.Optional(Type.Number({ minimum: -180, maximum: 180 })),
  },
  { $id: 'PersonLocation', title: 'PersonLocation', additionalProperties: false },
);

/**
 * A custom property's value: STRING a string; NUMBER a number; DATETIME an ISO 8601 date-time;
 * BOOLEAN true/false; SINGLE_SELECT one option name; MULTI_SELECT an array of option names;
 * LOCATION a PersonLocation. Each value is checked against its property's type on write.
 */
export const PropertyValue = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Array(Type.String()), Type.Ref(PersonLocation)], {
  $id: 'PropertyValue',
  title: 'PropertyValue',
});

export const Person = Type.Object(
  {
    personId: Type.String(),
    email: Type.String({ description: 'Primary email, unique in the workspace (case-insensitive). Masked ("***@***") without the personal-data right.' }),
    firstName: Type.Union([Type.String(), Type.Null()]),
    lastName: Type.Union([Type.String(), Type.Null()]),
    name: Type.Union([Type.String(), Type.Null()], { description: 'First and last name joined.' }),
    phone: Type.Union([Type.String(), Type.Null()]),
    additionalEmails: Type.Array(Type.String()),
    additionalPhones: Type.Array(Type.String()),
    isOptedOut: Type.Boolean(),
    contactStatus: Type.Union(contactStatuses.map((status) => Type.Literal(status)), {
      description: 'CONTACTABLE; OPTED_OUT (set with isOptedOut, keeps the person out of studies); UNREACHABLE (contact attempts failed).',
    }),
    populationIds: Type.Array(Type.String()),
    properties: Type.Record(Type.String(), Type.Ref(PropertyValue), { description: 'Custom property values by property id.' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  {
    $id: 'Person',
    title: 'Person',
    examples: [
      {
        personId: 'per_01JD0000000000000000000000',
        email: 'grace@example.org',
        firstName: 'Grace',
        lastName: 'Hopper',
        name: 'Grace Hopper',
        phone: '+44 20 7946 0000',
        additionalEmails: [],
        additionalPhones: [],
        isOptedOut: false,
        contactStatus: 'CONTACTABLE',
        populationIds: ['pop_01JD0000000000000000000000'],
        properties: { prp_01JD0000000000000000000000: 'GB', prp_01JD0000000000000000000001: 42 },
        createdAt: '2026-11-22T10:00:00.000Z',
        updatedAt: '2026-11-22T10:00:00.000Z',
      },
    ],
  },
);

export const PersonList = Type.Object(
  { results: Type.Array(Type.Ref(Person)), total: Type.Integer(), pageInfo: Type.Ref(PageInfo) },
  { title: 'PersonList' },
);

export const personSchemas = [PersonLocation, PropertyValue, Person];

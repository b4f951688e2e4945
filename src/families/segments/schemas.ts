import { type Static, Type } from '@sinclair/typebox';
import { paged, Text } from '../../http/schemas.js';
import { type RootFilter, rootFilterRef } from '../../search/schemas.js';

const exampleSegment = {
  segmentId: 'seg_01JD0000000000000000000000',
  name: 'Engaged in the last quarter',
  description: 'Completed an interview in the last 90 days',
  filter: { filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'TOTAL_NUMBER_OF_INTERVIEWS_COMPLETED_L90' }, comparison: 'GREATER_THAN_OR_EQUAL', value: 1 }] },
  createdAt: '2026-11-22T10:00:00.000Z',
  updatedAt: '2026-11-22T10:00:00.000Z',
};

export const Segment = Type.Object(
  {
    segmentId: Type.String(),
    name: Type.String(),
    description: Type.String({ description: 'Empty when none was given.' }),
    // The saved RootFilter as given. Written out as a plain object: the recursive RootFilter schema
    // is for checking requests; a response serializer need not walk it.
    filter: Type.Unsafe<RootFilter>({ type: 'object', additionalProperties: true, description: 'The saved filter, a RootFilter.' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  {
    $id: 'Segment',
    title: 'Segment',
    description: 'A saved people filter. Its members are whoever matches the filter at the time of a search (PERSON.SEGMENT_MEMBERSHIP).',
    examples: [exampleSegment],
  },
);

export const SegmentList = paged(Type.Ref(Segment), 'SegmentList', exampleSegment);

export const CreateSegmentBody = Type.Object(
  {
    name: Text({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Text({ maxLength: 5000 })),
    filter: rootFilterRef({ description: 'PERSON names and custom properties only, without `sort` and without SEGMENT_MEMBERSHIP.' }),
  },
  { additionalProperties: false, examples: [{ name: exampleSegment.name, description: exampleSegment.description, filter: exampleSegment.filter }] },
);
export type CreateSegmentBody = Static<typeof CreateSegmentBody>;

export const UpdateSegmentBody = Type.Object(
  {
    name: Type.Optional(Text({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Text({ maxLength: 5000 })),
    filter: Type.Optional(rootFilterRef()),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ name: 'Engaged this quarter' }] },
);
export type UpdateSegmentBody = Static<typeof UpdateSegmentBody>;

export const SegmentParams = Type.Object({ segmentId: Type.String({ minLength: 1, maxLength: 100 }) });

export const segmentSchemas = [Segment];

import { type Static, Type } from '@sinclair/typebox';
import { paged, Text } from '../../http/schemas.js';

const examplePopulation = {
  populationId: 'pop_01JD0000000000000000000000',
  name: 'Customers',
  description: 'People who bought from us in the last two years',
};

export const Population = Type.Object(
  {
    populationId: Type.String(),
    name: Type.String(),
    description: Type.String({ description: 'Empty when none was given.' }),
  },
  { $id: 'Population', title: 'Population', description: 'A pool of people the workspace recruits from.', examples: [examplePopulation] },
);

export const PopulationList = paged(Type.Ref(Population), 'PopulationList', examplePopulation);

export const CreatePopulationBody = Type.Object(
  {
    name: Text({ minLength: 1, maxLength: 200, description: 'Need not be unique.' }),
    description: Type.Optional(Text({ maxLength: 5000 })),
  },
  { additionalProperties: false, examples: [{ name: 'Customers', description: 'People who bought from us in the last two years' }] },
);
export type CreatePopulationBody = Static<typeof CreatePopulationBody>;

export const populationSchemas = [Population];

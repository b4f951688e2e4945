import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type TestService } from '../../../test/harness.js';
import { createPerson, createProperties, getPerson } from '../../../test/people-factory.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

describe('deleting a person property removes its values from people', () => {
  it('E20: the value leaves every person, the others stay; its unique values are free', async () => {
    const tenant = await createTenant(service);
    const { Code, Kept } = await createProperties(service, tenant, [
      { name: 'Code', propertyType: 'STRING', isUnique: true },
      { name: 'Kept', propertyType: 'NUMBER' },
    ]);
    const first = await createPerson(service, tenant, { properties: { [Code!]: 'A', [Kept!]: 1 } });
    const second = await createPerson(service, tenant, { properties: { [Code!]: 'B' } });
    expect((await call(service, 'DELETE', `/properties/${Code}`, { token: tenant.token })).statusCode).toBe(200);
    expect((await getPerson(service, tenant, first.personId)).json().properties).toEqual({ [Kept!]: 1 });
    expect((await getPerson(service, tenant, second.personId)).json().properties).toEqual({});
    const claims = await service.deps.db.selectFrom('person_unique_values').where('workspace_id', '=', tenant.workspaceId).selectAll().execute();
    expect(claims).toEqual([]);
    // A new property of the same name starts empty and unclaimed.
    const { Code: again } = await createProperties(service, tenant, [{ name: 'Code', propertyType: 'STRING', isUnique: true }]);
    await createPerson(service, tenant, { properties: { [again!]: 'A' } });
  });

  it("E8: the values of every deleted property go, another workspace's people untouched", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other');
    const { One, Two, Three } = await createProperties(service, tenant, [
      { name: 'One', propertyType: 'STRING' },
      { name: 'Two', propertyType: 'BOOLEAN' },
      { name: 'Three', propertyType: 'STRING' },
    ]);
    const { One: theirs } = await createProperties(service, other, [{ name: 'One', propertyType: 'STRING' }]);
    const person = await createPerson(service, tenant, { properties: { [One!]: 'x', [Two!]: true, [Three!]: 'y' } });
    const foreign = await createPerson(service, other, { properties: { [theirs!]: 'z' } });
    const response = await call(service, 'POST', '/properties/delete', { token: tenant.token, body: { propertyIds: [One, Two, 'prp_unknown'] } });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().deleted).toEqual([One, Two]);
    expect((await getPerson(service, tenant, person.personId)).json().properties).toEqual({ [Three!]: 'y' });
    expect((await getPerson(service, other, foreign.personId)).json().properties).toEqual({ [theirs!]: 'z' });
  });
});

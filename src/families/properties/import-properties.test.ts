import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

interface Property {
  propertyId: string;
  name: string;
  propertyType: string;
  propertyOptions: { propertyOptionId: string; name: string; color: string; order: string }[];
  isUnique: boolean;
  isPHI: boolean;
  isPII: boolean;
  description: string;
  propertyGroupId: string;
}
interface ImportResponse {
  results: { personProperty: Property; isAsync: boolean; bulkActionUserRequestId: string }[];
  errors: { message: string; path: string[]; name: string }[];
}
interface Group {
  propertyGroupId: string;
  name: string;
  scopeType: string;
  populationIds: string[];
  propertyIds: string[];
  isDefault: boolean;
}

async function importProperties(tenant: Tenant, items: unknown[]) {
  const response = await call(service, 'POST', '/properties/import', { token: tenant.token, body: items });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<ImportResponse>();
}

async function listProperties(tenant: Tenant) {
  const response = await call(service, 'GET', '/properties', { token: tenant.token, query: { size: '100' } });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ results: Property[]; total: number }>();
}

async function listGroups(tenant: Tenant) {
  const response = await call(service, 'GET', '/property-groups', { token: tenant.token });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ results: Group[] }>().results;
}

async function createGroup(tenant: Tenant, name = 'Profile') {
  const response = await call(service, 'POST', '/property-groups', { token: tenant.token, body: { name, scopeType: 'ALL' } });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<Group>().propertyGroupId;
}

const named = (name: string, propertyType = 'STRING', extra: object = {}) => ({ name, propertyType, ...extra });

describe('POST /properties/import (E4)', () => {
  it('creates a property of every type, with options, flags and the default group', async () => {
    const tenant = await createTenant(service);
    const body = await importProperties(tenant, [
      named('Nickname', 'STRING', { description: 'What friends call them', isPII: true }),
      named('Household size', 'NUMBER'),
      named('Last purchase', 'DATETIME'),
      named('Has pets', 'BOOLEAN', { isPHI: true }),
      named('Shopping frequency', 'SINGLE_SELECT', { propertyOptions: [{ name: 'Weekly', color: 'BLUE' }, { name: 'Monthly' }, { name: 'Rarely' }] }),
      named('Devices', 'MULTI_SELECT', { propertyOptions: [{ name: 'Phone' }, { name: 'Tablet', color: 'PINK' }] }),
      named('Home', 'LOCATION'),
      named('Customer number', 'NUMBER', { isUnique: true }),
    ]);
    expect(body.errors).toEqual([]);
    expect(body.results.map((result) => result.personProperty.name)).toEqual([
      'Nickname',
      'Household size',
      'Last purchase',
      'Has pets',
      'Shopping frequency',
      'Devices',
      'Home',
      'Customer number',
    ]);
    const [nickname, , , pets, frequency, devices, , customerNumber] = body.results.map((result) => result.personProperty);
    expect(nickname).toEqual({
      propertyId: expect.stringMatching(/^prp_/),
      name: 'Nickname',
      propertyType: 'STRING',
      propertyOptions: [],
      isUnique: false,
      isPHI: false,
      isPII: true,
      description: 'What friends call them',
      propertyGroupId: expect.stringMatching(/^prg_/),
      editableByPerson: false,
    });
    expect(pets).toMatchObject({ isPHI: true, isPII: false, description: '' });
    expect(customerNumber).toMatchObject({ isUnique: true });
    // Colors not given follow the palette by position; order is the position as a string.
    expect(frequency!.propertyOptions).toEqual([
      { propertyOptionId: expect.stringMatching(/^pro_/), name: 'Weekly', color: 'BLUE', order: '0' },
      { propertyOptionId: expect.stringMatching(/^pro_/), name: 'Monthly', color: 'YELLOW', order: '1' },
      { propertyOptionId: expect.stringMatching(/^pro_/), name: 'Rarely', color: 'BLUE', order: '2' },
    ]);
    expect(devices!.propertyOptions.map((option) => [option.name, option.color, option.order])).toEqual([
      ['Phone', 'GREEN', '0'],
      ['Tablet', 'PINK', '1'],
    ]);
    const optionIds = [...frequency!.propertyOptions, ...devices!.propertyOptions].map((option) => option.propertyOptionId);
    expect(new Set(optionIds).size).toBe(optionIds.length);

    // One request id for the whole request; nothing is asynchronous.
    const requestIds = new Set(body.results.map((result) => result.bulkActionUserRequestId));
    expect(requestIds.size).toBe(1);
    expect([...requestIds][0]).toMatch(/^bar_/);
    expect(body.results.every((result) => result.isAsync === false)).toBe(true);

    const groups = await listGroups(tenant);
    expect(groups).toEqual([
      {
        propertyGroupId: nickname!.propertyGroupId,
        name: 'General',
        scopeType: 'ALL',
        populationIds: [],
        propertyIds: body.results.map((result) => result.personProperty.propertyId),
        isDefault: true,
      },
    ]);
    const listed = await listProperties(tenant);
    expect(listed.total).toBe(8);
    expect(listed.results).toEqual(body.results.map((result) => result.personProperty));
  });

  it('reuses the default group, gives each request its own request id, and puts a property in the group it names', async () => {
    const tenant = await createTenant(service);
    const first = await importProperties(tenant, [named('One')]);
    const second = await importProperties(tenant, [named('Two')]);
    expect(second.results[0]!.personProperty.propertyGroupId).toBe(first.results[0]!.personProperty.propertyGroupId);
    expect(second.results[0]!.bulkActionUserRequestId).not.toBe(first.results[0]!.bulkActionUserRequestId);

    const profile = await createGroup(tenant);
    const third = await importProperties(tenant, [named('Three', 'STRING', { propertyGroupId: profile })]);
    expect(third.results[0]!.personProperty.propertyGroupId).toBe(profile);
    const groups = await listGroups(tenant);
    expect(groups.map((group) => [group.name, group.isDefault, group.propertyIds.length])).toEqual([
      ['General', true, 2],
      ['Profile', false, 1],
    ]);
  });

  it('makes no default group when every property names its group', async () => {
    const tenant = await createTenant(service);
    const profile = await createGroup(tenant);
    await importProperties(tenant, [named('Age', 'NUMBER', { propertyGroupId: profile })]);
    expect((await listGroups(tenant)).map((group) => group.name)).toEqual(['Profile']);
  });

  it('accepts an empty propertyOptions on any type', async () => {
    const tenant = await createTenant(service);
    const body = await importProperties(tenant, [named('Notes', 'STRING', { propertyOptions: [] }), named('Choice', 'SINGLE_SELECT', { propertyOptions: [] })]);
    expect(body.errors).toEqual([]);
    expect(body.results.map((result) => result.personProperty.propertyOptions)).toEqual([[], []]);
  });

  describe('per-item errors (200)', () => {
    it('refuses options on a type other than SINGLE_SELECT and MULTI_SELECT, and creates the rest', async () => {
      const tenant = await createTenant(service);
      const items = ['STRING', 'NUMBER', 'DATETIME', 'BOOLEAN', 'LOCATION'].map((type) => named(`A ${type}`, type, { propertyOptions: [{ name: 'x' }] }));
      const body = await importProperties(tenant, [...items, named('Fine', 'SINGLE_SELECT', { propertyOptions: [{ name: 'x' }] })]);
      expect(body.errors).toEqual(
        items.map((item, index) => ({
          message: 'propertyOptions are allowed only for SINGLE_SELECT and MULTI_SELECT properties',
          path: [String(index), 'propertyOptions'],
          name: item.name,
        })),
      );
      expect(body.results.map((result) => result.personProperty.name)).toEqual(['Fine']);
      expect((await listProperties(tenant)).total).toBe(1);
    });

    it('refuses a name taken in the workspace, case-insensitively (also beyond ASCII)', async () => {
      const tenant = await createTenant(service);
      await importProperties(tenant, [named('Age'), named('Äpfel'), named('İstanbul')]);
      const body = await importProperties(tenant, [named('AGE'), named('äPFEL'), named('istanbul'), named('Agent')]);
      expect(body.errors).toEqual([
        { message: 'A property with this name already exists', path: ['0', 'name'], name: 'AGE' },
        { message: 'A property with this name already exists', path: ['1', 'name'], name: 'äPFEL' },
        { message: 'A property with this name already exists', path: ['2', 'name'], name: 'istanbul' },
      ]);
      expect(body.results.map((result) => result.personProperty.name)).toEqual(['Agent']);
    });

    it('refuses a name an earlier item of the request has, and keeps the first', async () => {
      const tenant = await createTenant(service);
      const body = await importProperties(tenant, [named('Income', 'NUMBER'), named('Other'), named('income', 'STRING')]);
      expect(body.errors).toEqual([{ message: 'An earlier item of this request has this name', path: ['2', 'name'], name: 'income' }]);
      expect(body.results.map((result) => result.personProperty.name)).toEqual(['Income', 'Other']);
    });

    it('lets a later item take the name of an earlier item that was refused', async () => {
      const tenant = await createTenant(service);
      const body = await importProperties(tenant, [named('Pets', 'BOOLEAN', { propertyOptions: [{ name: 'x' }] }), named('pets', 'BOOLEAN')]);
      expect(body.errors.map((error) => error.path)).toEqual([['0', 'propertyOptions']]);
      expect(body.results.map((result) => result.personProperty.name)).toEqual(['pets']);
    });

    it('refuses repeated option names, case-insensitively, naming each repeat', async () => {
      const tenant = await createTenant(service);
      const body = await importProperties(tenant, [
        named('Colour', 'MULTI_SELECT', { propertyOptions: [{ name: 'Red' }, { name: 'Blue' }, { name: 'red' }, { name: 'BLUE' }] }),
        named('Size', 'SINGLE_SELECT', { propertyOptions: [{ name: 'S' }, { name: 'M' }] }),
      ]);
      expect(body.errors).toEqual([
        { message: 'An earlier option of this property has this name', path: ['0', 'propertyOptions', '2', 'name'], name: 'Colour' },
        { message: 'An earlier option of this property has this name', path: ['0', 'propertyOptions', '3', 'name'], name: 'Colour' },
      ]);
      expect(body.results.map((result) => result.personProperty.name)).toEqual(['Size']);
    });

    it('refuses isUnique on types whose values cannot be unique', async () => {
      const tenant = await createTenant(service);
      const types = ['BOOLEAN', 'SINGLE_SELECT', 'MULTI_SELECT', 'LOCATION'];
      const body = await importProperties(tenant, [...types.map((type) => named(`U ${type}`, type, { isUnique: true })), named('U DATETIME', 'DATETIME', { isUnique: true })]);
      expect(body.errors).toEqual(
        types.map((type, index) => ({ message: 'isUnique applies only to STRING, NUMBER and DATETIME properties', path: [String(index), 'isUnique'], name: `U ${type}` })),
      );
      expect(body.results.map((result) => result.personProperty.name)).toEqual(['U DATETIME']);
    });

    it('allows 10 unique properties per workspace, counting the earlier items of the request', async () => {
      const tenant = await createTenant(service);
      const unique = (name: string) => named(name, 'STRING', { isUnique: true });
      const first = await importProperties(tenant, Array.from({ length: 8 }, (_, index) => unique(`Unique ${index}`)));
      expect(first.errors).toEqual([]);
      // The first item fails for its name, so it does not count; the next two reach 10; the fourth is one too many.
      const body = await importProperties(tenant, [unique('Unique 0'), unique('Unique 8'), unique('Unique 9'), unique('Unique 10'), named('Not unique')]);
      expect(body.errors).toEqual([
        { message: 'A property with this name already exists', path: ['0', 'name'], name: 'Unique 0' },
        { message: 'A workspace can have at most 10 unique properties', path: ['3', 'isUnique'], name: 'Unique 10' },
      ]);
      expect(body.results.map((result) => result.personProperty.name)).toEqual(['Unique 8', 'Unique 9', 'Not unique']);
      const listed = await listProperties(tenant);
      expect(listed.results.filter((property) => property.isUnique)).toHaveLength(10);
    });

    it("refuses an unknown propertyGroupId, or another workspace's", async () => {
      const tenant = await createTenant(service);
      const other = await createTenant(service, 'Other workspace');
      const theirs = await createGroup(other);
      const body = await importProperties(tenant, [named('A', 'STRING', { propertyGroupId: 'prg_nothere' }), named('B', 'STRING', { propertyGroupId: theirs })]);
      expect(body.errors).toEqual([
        { message: 'Property group not found', path: ['0', 'propertyGroupId'], name: 'A' },
        { message: 'Property group not found', path: ['1', 'propertyGroupId'], name: 'B' },
      ]);
      expect(body.results).toEqual([]);
    });

    it('reports every rule an item breaks, and creates nothing (not even the default group) when every item fails', async () => {
      const tenant = await createTenant(service);
      await importProperties(tenant, [named('Taken', 'STRING', { propertyGroupId: await createGroup(tenant) })]);
      const body = await importProperties(tenant, [
        named('taken', 'BOOLEAN', { isUnique: true, propertyOptions: [{ name: 'a' }], propertyGroupId: 'prg_nothere' }),
      ]);
      expect(body).toEqual({
        results: [],
        errors: [
          { message: 'A property with this name already exists', path: ['0', 'name'], name: 'taken' },
          { message: 'propertyOptions are allowed only for SINGLE_SELECT and MULTI_SELECT properties', path: ['0', 'propertyOptions'], name: 'taken' },
          { message: 'isUnique applies only to STRING, NUMBER and DATETIME properties', path: ['0', 'isUnique'], name: 'taken' },
          { message: 'Property group not found', path: ['0', 'propertyGroupId'], name: 'taken' },
        ],
      });
      expect((await listProperties(tenant)).total).toBe(1);
      expect((await listGroups(tenant)).map((group) => group.name)).toEqual(['Profile']);
    });
  });

  describe('400', () => {
    const option = (index: number) => ({ name: `Option ${index}` });
    it.each([
      ['11 items', Array.from({ length: 11 }, (_, index) => named(`P${index}`)), []],
      ['no items', [], []],
      ['an object', { name: 'Age', propertyType: 'NUMBER' }, []],
      ['a missing name', [{ propertyType: 'STRING' }], ['0', 'name']],
      ['an empty name', [named('')], ['0', 'name']],
      ['a name of 201 characters', [named('x'.repeat(201))], ['0', 'name']],
      ['a missing propertyType', [{ name: 'Age' }], ['0', 'propertyType']],
      ['an unknown propertyType', [named('Age', 'INTEGER')], ['0', 'propertyType']],
      ['101 options', [named('Many', 'SINGLE_SELECT', { propertyOptions: Array.from({ length: 101 }, (_, index) => option(index)) })], ['0', 'propertyOptions']],
      ['an unknown color', [named('C', 'SINGLE_SELECT', { propertyOptions: [{ name: 'a', color: 'TEAL' }] })], ['0', 'propertyOptions', '0', 'color']],
      ['an option without a name', [named('C', 'SINGLE_SELECT', { propertyOptions: [{ color: 'RED' }] })], ['0', 'propertyOptions', '0', 'name']],
      ['a string isUnique', [named('Age', 'NUMBER', { isUnique: 'yes' })], ['0', 'isUnique']],
      ['an unknown field', [named('Age', 'NUMBER', { isRequired: true })], ['0', 'isRequired']],
      ['a NUL in a name', [named('A\u0000ge')], ['0', 'name']],
    ])('refuses %s, creating nothing', async (_case, body, path) => {
      const tenant = await createTenant(service);
      const response = await call(service, 'POST', '/properties/import', { token: tenant.token, body });
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
      expect((await listProperties(tenant)).total).toBe(0);
    });

    it('accepts 10 items and 100 options', async () => {
      const tenant = await createTenant(service);
      const body = await importProperties(tenant, [
        named('Many', 'MULTI_SELECT', { propertyOptions: Array.from({ length: 100 }, (_, index) => option(index)) }),
        ...Array.from({ length: 9 }, (_, index) => named(`P${index}`)),
      ]);
      expect(body.errors).toEqual([]);
      expect(body.results).toHaveLength(10);
      expect(body.results[0]!.personProperty.propertyOptions.map((item) => item.order)).toEqual(Array.from({ length: 100 }, (_, index) => String(index)));
    });
  });

  describe('concurrency', () => {
    it('creates a name once when requests race for it; the others get an error item', async () => {
      const tenant = await createTenant(service);
      const responses = await Promise.all(
        Array.from({ length: 6 }, (_, index) => call(service, 'POST', '/properties/import', { token: tenant.token, body: [named(index % 2 ? 'RACE' : 'race')] })),
      );
      expect(responses.map((response) => response.statusCode)).toEqual(Array(6).fill(200));
      const bodies = responses.map((response) => response.json<ImportResponse>());
      expect(bodies.filter((body) => body.results.length === 1)).toHaveLength(1);
      expect(bodies.filter((body) => body.errors[0]?.message === 'A property with this name already exists')).toHaveLength(5);
      expect((await listProperties(tenant)).total).toBe(1);
      expect((await listGroups(tenant)).filter((group) => group.isDefault)).toHaveLength(1);
    });

    it('never lets racing requests pass 10 unique properties', async () => {
      const tenant = await createTenant(service);
      const responses = await Promise.all(
        Array.from({ length: 4 }, (_, request) =>
          call(service, 'POST', '/properties/import', {
            token: tenant.token,
            body: Array.from({ length: 4 }, (_, index) => named(`Unique ${request}.${index}`, 'STRING', { isUnique: true })),
          }),
        ),
      );
      expect(responses.map((response) => response.statusCode)).toEqual([200, 200, 200, 200]);
      const created = responses.flatMap((response) => response.json<ImportResponse>().results);
      const refused = responses.flatMap((response) => response.json<ImportResponse>().errors);
      expect(created).toHaveLength(10);
      expect(refused).toHaveLength(6);
      expect((await listProperties(tenant)).results.filter((property) => property.isUnique)).toHaveLength(10);
    });
  });
});

describeSecurity('POST /properties/import', () => service, {
  method: 'POST',
  right: 'properties:write',
  addressesResource: false,
  request: async () => ({ url: '/properties/import', body: [{ name: 'Age', propertyType: 'NUMBER' }] }),
});

describe('PATCH /properties/{propertyId}: editableByPerson', () => {
  it('is false by default, set at import, changed by PATCH and read back by GET /properties', async () => {
    const tenant = await createTenant(service);
    const [plain, editable] = (await importProperties(tenant, [named('Plain'), named('Editable', 'STRING', { editableByPerson: true })])).results.map((result) => result.personProperty);
    expect(plain).toMatchObject({ editableByPerson: false });
    expect(editable).toMatchObject({ editableByPerson: true });
    const patched = await call(service, 'PATCH', `/properties/${plain!.propertyId}`, { token: tenant.token, body: { editableByPerson: true, description: 'Now yours to change' } });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toMatchObject({ propertyId: plain!.propertyId, editableByPerson: true, description: 'Now yours to change' });
    const listed = await call(service, 'GET', '/properties', { token: tenant.token });
    expect(listed.json<{ results: { propertyId: string; editableByPerson: boolean }[] }>().results.find((property) => property.propertyId === plain!.propertyId)).toMatchObject({ editableByPerson: true });
  });

  it('refuses an empty body, an unknown field and a wrong type (400 naming the field), and another workspace\'s property (404)', async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service);
    const [property] = (await importProperties(tenant, [named('Mine')])).results.map((result) => result.personProperty);
    expect((await call(service, 'PATCH', `/properties/${property!.propertyId}`, { token: tenant.token, body: {} })).statusCode).toBe(400);
    const unknown = await call(service, 'PATCH', `/properties/${property!.propertyId}`, { token: tenant.token, body: { name: 'Renamed' } });
    expect(unknown.statusCode).toBe(400);
    const wrong = await call(service, 'PATCH', `/properties/${property!.propertyId}`, { token: tenant.token, body: { editableByPerson: 'yes' } });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json<{ errors: { path: string[] }[] }>().errors[0]!.path).toEqual(['editableByPerson']);
    expect((await call(service, 'PATCH', `/properties/${property!.propertyId}`, { token: other.token, body: { editableByPerson: true } })).statusCode).toBe(404);
  });
});

describeSecurity('PATCH /properties/{propertyId}', () => service, {
  method: 'PATCH',
  right: 'properties:write',
  addressesResource: true,
  request: async (tenant) => {
    const [property] = (await importProperties(tenant, [named(`Patched ${Math.random()}`)])).results.map((result) => result.personProperty);
    return { url: `/properties/${property!.propertyId}`, body: { editableByPerson: true } };
  },
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, type Tenant, type TestService, startTestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';
import { createProperties } from '../../../test/people-factory.js';
import { createStudy } from '../../../test/participants-factory.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

/** A study whose screener asks how often (a select) and how many orders (a number). */
async function studyWithScreener(tenant: Tenant) {
  const studyId = await createStudy(service, tenant, { studyType: 'INTERVIEWS' });
  const screener = await call(service, 'PUT', `/studies/${studyId}/screener`, {
    token: tenant.token,
    body: {
      qualifyByDefault: true,
      questions: [
        { key: 'freq', name: 'How often do you shop online?', type: 'SINGLE_SELECT', isRequired: true, choices: [{ id: 'weekly', label: 'Weekly' }, { id: 'monthly', label: 'Monthly' }] },
        { key: 'orders', name: 'How many orders last month?', type: 'NUMBER', minimum: 0, integer: true, isRequired: false },
        { key: 'why', name: 'Anything else?', type: 'LONG_FORM', isRequired: false },
      ],
    },
  });
  expect(screener.statusCode, screener.body).toBe(200);
  return studyId;
}

const put = (tenant: Tenant, studyId: string, body: unknown, token = tenant.token) => call(service, 'PUT', `/studies/${studyId}/quota-groups`, { token, body });
const list = (tenant: Tenant, studyId: string, token = tenant.token) => call(service, 'GET', `/studies/${studyId}/quota-groups`, { token });

interface Group {
  quotaGroupId: string;
  name: string;
  position: number;
  cap: number;
  filled: number;
  isFull: boolean;
  answers: unknown;
  filter: unknown;
}

describe('PUT /studies/{studyId}/quota-groups', () => {
  it('writes the groups in order, each with its cap, conditions and no place filled; GET lists them the same', async () => {
    const tenant = await createTenant(service);
    const studyId = await studyWithScreener(tenant);
    const { Devices } = await createProperties(service, tenant, [{ name: 'Devices', propertyType: 'MULTI_SELECT', propertyOptions: [{ name: 'iOS' }, { name: 'Android' }] }]);
    const filter = { filters: [{ property: { propertyId: Devices }, comparison: 'HAS_ANY_OF', value: ['iOS'] }] };
    const response = await put(tenant, studyId, {
      quotaGroups: [
        { name: 'Weekly on iOS', cap: 7, answers: [{ questionKey: 'freq', choiceIds: ['weekly'] }], filter },
        { name: 'Heavy buyers', cap: 3, answers: [{ questionKey: 'orders', range: { min: 10 } }] },
        { name: 'Everyone else', cap: 2 },
      ],
    });
    expect(response.statusCode, response.body).toBe(200);
    const groups = response.json<{ quotaGroups: (Group & { studyId: string; createdAt: string; updatedAt: string })[] }>().quotaGroups;
    expect(groups.map((group) => [group.name, group.position, group.cap, group.filled, group.isFull])).toEqual([
      ['Weekly on iOS', 0, 7, 0, false],
      ['Heavy buyers', 1, 3, 0, false],
      ['Everyone else', 2, 2, 0, false],
    ]);
    expect(groups[0]).toMatchObject({ quotaGroupId: expect.stringMatching(/^qgr_/), studyId, answers: [{ questionKey: 'freq', choiceIds: ['weekly'] }], filter });
    expect(groups[1]!.answers).toEqual([{ questionKey: 'orders', range: { min: 10 } }]);
    expect(groups[2]).toMatchObject({ answers: [], filter: null });
    expect(new Date(groups[0]!.createdAt).toISOString()).toBe(groups[0]!.createdAt);
    const listed = await list(tenant, studyId);
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toEqual(response.json());
  });

  it('keeps a group named by its id with its places filled, moves it, drops groups left out; a cap may go below filled (full, nobody more)', async () => {
    const tenant = await createTenant(service);
    const studyId = await studyWithScreener(tenant);
    const first = (await put(tenant, studyId, { quotaGroups: [{ name: 'A', cap: 5 }, { name: 'B', cap: 5 }, { name: 'C', cap: 5 }] })).json<{ quotaGroups: Group[] }>().quotaGroups;
    const [a, b, c] = first as [Group, Group, Group];
    await service.deps.db.updateTable('quota_groups').set({ filled: 4 }).where('quota_group_id', '=', a.quotaGroupId).execute();
    const second = await put(tenant, studyId, { quotaGroups: [{ name: 'New', cap: 1 }, { quotaGroupId: b.quotaGroupId, name: 'B renamed', cap: 9 }, { quotaGroupId: a.quotaGroupId, name: 'A', cap: 2 }] });
    expect(second.statusCode, second.body).toBe(200);
    const groups = second.json<{ quotaGroups: Group[] }>().quotaGroups;
    expect(groups.map((group) => [group.name, group.position, group.cap, group.filled, group.isFull])).toEqual([
      ['New', 0, 1, 0, false],
      ['B renamed', 1, 9, 0, false],
      ['A', 2, 2, 4, true],
    ]);
    expect(groups[1]!.quotaGroupId).toBe(b.quotaGroupId);
    expect(groups[2]!.quotaGroupId).toBe(a.quotaGroupId);
    expect(groups.map((group) => group.quotaGroupId)).not.toContain(c.quotaGroupId);
    // Unfilled groups may swap names (no step holds one name twice).
    const swapped = await put(tenant, studyId, { quotaGroups: [{ quotaGroupId: groups[0]!.quotaGroupId, name: 'B renamed', cap: 1 }, { quotaGroupId: b.quotaGroupId, name: 'New', cap: 9 }] });
    expect(swapped.statusCode, swapped.body).toBe(200);
    expect(swapped.json<{ quotaGroups: Group[] }>().quotaGroups.map((group) => group.name)).toEqual(['B renamed', 'New']);
    const emptied = await put(tenant, studyId, { quotaGroups: [] });
    expect(emptied.json()).toEqual({ quotaGroups: [] });
    expect((await list(tenant, studyId)).json()).toEqual({ quotaGroups: [] });
  });

  it('refuses, naming the field, what the schema refuses: no list, a cap below 1 or not whole, an empty name, unknown fields, too many groups', async () => {
    const tenant = await createTenant(service);
    const studyId = await studyWithScreener(tenant);
    const cases: [unknown, string[]][] = [
      [{}, ['quotaGroups']],
      [{ quotaGroups: [{ name: 'A', cap: 0 }] }, ['quotaGroups', '0', 'cap']],
      [{ quotaGroups: [{ name: 'A', cap: 1.5 }] }, ['quotaGroups', '0', 'cap']],
      [{ quotaGroups: [{ name: '', cap: 1 }] }, ['quotaGroups', '0', 'name']],
      [{ quotaGroups: [{ name: 'A', cap: 1, colour: 'red' }] }, ['quotaGroups', '0', 'colour']],
      [{ quotaGroups: [{ name: 'A', cap: 1, answers: [{ questionKey: 'freq', choiceIds: [] }] }] }, ['quotaGroups', '0', 'answers', '0', 'choiceIds']],
      [{ quotaGroups: Array.from({ length: 51 }, (_, index) => ({ name: `G${index}`, cap: 1 })) }, ['quotaGroups']],
    ];
    for (const [body, path] of cases) {
      const response = await put(tenant, studyId, body);
      expect(response.statusCode, JSON.stringify(body).slice(0, 100)).toBe(400);
      expect(response.json<{ errors: { path: string[] }[] }>().errors.map((error) => error.path), JSON.stringify(body).slice(0, 100)).toContainEqual(path);
    }
  });

  it('refuses every problem of the conditions at once, each with its path, and changes nothing', async () => {
    const tenant = await createTenant(service);
    const studyId = await studyWithScreener(tenant);
    expect((await put(tenant, studyId, { quotaGroups: [{ name: 'Kept', cap: 3 }] })).statusCode).toBe(200);
    const response = await put(tenant, studyId, {
      quotaGroups: [
        { name: 'Same', cap: 1, answers: [{ questionKey: 'nope', choiceIds: ['weekly'] }] },
        { name: 'same ', cap: 1, answers: [{ questionKey: 'freq', choiceIds: ['weekly', 'daily'] }] },
        { name: 'C', cap: 1, answers: [{ questionKey: 'freq', range: { min: 1 } }, { questionKey: 'orders', choiceIds: ['weekly'] }] },
        { name: 'D', cap: 1, answers: [{ questionKey: 'orders', range: { min: 5, max: 1 } }, { questionKey: 'orders', range: {} }, { questionKey: 'freq' }, { questionKey: 'freq', choiceIds: ['weekly'], range: { min: 1 } }] },
        { name: 'E', cap: 1, answers: [{ questionKey: 'why', choiceIds: ['x'] }] },
      ],
    });
    expect(response.statusCode).toBe(400);
    expect(response.json<{ errors: { message: string; path: string[] }[] }>().errors.map((error) => error.path)).toEqual([
      ['quotaGroups', '1', 'name'],
      ['quotaGroups', '0', 'answers', '0', 'questionKey'],
      ['quotaGroups', '1', 'answers', '0', 'choiceIds', '1'],
      ['quotaGroups', '2', 'answers', '0', 'range'],
      ['quotaGroups', '2', 'answers', '1', 'choiceIds'],
      ['quotaGroups', '3', 'answers', '0', 'range', 'max'],
      ['quotaGroups', '3', 'answers', '1', 'range'],
      ['quotaGroups', '3', 'answers', '2'],
      ['quotaGroups', '3', 'answers', '3'],
      ['quotaGroups', '4', 'answers', '0', 'choiceIds'],
    ]);
    expect(JSON.stringify(response.json())).toContain('keys: freq, orders, why');
    expect((await list(tenant, studyId)).json<{ quotaGroups: Group[] }>().quotaGroups.map((group) => group.name)).toEqual(['Kept']);
  });

  it('refuses answer conditions when the study has no screener, naming the field', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(service, tenant, { studyType: 'INTERVIEWS' });
    const response = await put(tenant, studyId, { quotaGroups: [{ name: 'A', cap: 1, answers: [{ questionKey: 'freq', choiceIds: ['weekly'] }] }] });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.stringContaining('the study has no screener questions'), path: ['quotaGroups', '0', 'answers', '0', 'questionKey'] }] });
  });

  it("checks the filter as a segment's: unknown names, a sort and segments are 400 under the group's path; unknown ids 404", async () => {
    const tenant = await createTenant(service);
    const studyId = await studyWithScreener(tenant);
    const cases: [unknown, number, string[]][] = [
      [{ filters: [{ property: { propertyId: 'prp_unknown' }, comparison: 'EQUALS', value: 'x' }] }, 400, ['quotaGroups', '0', 'filter', 'filters', '0', 'property', 'propertyId']],
      [{ filters: [{ property: { propertyGroup: 'PARTICIPANT', propertyName: 'STATUS' }, comparison: 'IS_ANY_OF', value: ['INVITED'] }] }, 400, ['quotaGroups', '0', 'filter', 'filters', '0', 'property', 'propertyGroup']],
      [{ filters: [], sort: { operator: 'ASC', propertyGroup: 'PERSON', propertyName: 'EMAIL' } }, 400, ['quotaGroups', '0', 'filter', 'sort']],
      [{ filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'SEGMENT_MEMBERSHIP' }, comparison: 'HAS_ANY_OF', value: ['seg_x'] }] }, 400, ['quotaGroups', '0', 'filter', 'filters', '0']],
      [{ filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'POPULATION_MEMBERSHIP' }, comparison: 'HAS_ANY_OF', value: ['pop_unknown'] }] }, 404, ['quotaGroups', '0', 'filter', 'filters', '0', 'value', '0']],
    ];
    for (const [filter, status, path] of cases) {
      const response = await put(tenant, studyId, { quotaGroups: [{ name: 'A', cap: 1, filter }] });
      expect(response.statusCode, JSON.stringify(filter)).toBe(status);
      expect(response.json<{ errors: { path: string[] }[] }>().errors[0]!.path, JSON.stringify(filter)).toEqual(path);
    }
  });

  it("answers 404 for an unknown study or another study's group, and 409 for renaming a group with places filled", async () => {
    const tenant = await createTenant(service);
    const studyId = await studyWithScreener(tenant);
    const other = await studyWithScreener(tenant);
    const unknown = await put(tenant, 'stu_unknown', { quotaGroups: [] });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ errors: [{ message: 'Study not found', path: ['studyId'] }] });
    expect((await list(tenant, 'stu_unknown')).statusCode).toBe(404);
    const [foreign] = (await put(tenant, other, { quotaGroups: [{ name: 'Theirs', cap: 1 }] })).json<{ quotaGroups: Group[] }>().quotaGroups;
    const stolen = await put(tenant, studyId, { quotaGroups: [{ quotaGroupId: foreign!.quotaGroupId, name: 'Theirs', cap: 1 }] });
    expect(stolen.statusCode).toBe(404);
    expect(stolen.json()).toEqual({ errors: [{ message: 'Quota group not found (a group of this study)', path: ['quotaGroups', '0', 'quotaGroupId'] }] });
    const twice = await put(tenant, other, { quotaGroups: [{ quotaGroupId: foreign!.quotaGroupId, name: 'Theirs', cap: 1 }, { quotaGroupId: foreign!.quotaGroupId, name: 'Again', cap: 1 }] });
    expect(twice.statusCode).toBe(400);
    expect(twice.json<{ errors: { path: string[] }[] }>().errors[0]!.path).toEqual(['quotaGroups', '1', 'quotaGroupId']);
    await service.deps.db.updateTable('quota_groups').set({ filled: 1 }).where('quota_group_id', '=', foreign!.quotaGroupId).execute();
    const renamed = await put(tenant, other, { quotaGroups: [{ quotaGroupId: foreign!.quotaGroupId, name: 'Mine', cap: 1 }] });
    expect(renamed.statusCode).toBe(409);
    expect(renamed.json<{ errors: { message: string; path: string[] }[] }>().errors).toEqual([{ message: expect.stringContaining('keeps its name (Theirs)'), path: ['quotaGroups', '0', 'name'] }]);
  });

  it('needs the personal-data right to filter on personal data, and masks its values for tokens without it; answer conditions are hidden from tokens that cannot read screeners', async () => {
    const tenant = await createTenant(service);
    const studyId = await studyWithScreener(tenant);
    const { Secret } = await createProperties(service, tenant, [{ name: 'Secret', propertyType: 'STRING', isPII: true }]);
    const filter = { filters: [{ property: { propertyId: Secret }, comparison: 'EQUALS', value: 'hush' }] };
    const noPii = await tenant.tokenFor('RESEARCHER', { canReadPersonalData: false });
    expect((await put(tenant, studyId, { quotaGroups: [{ name: 'A', cap: 1, filter }] }, noPii.token)).statusCode).toBe(403);
    expect((await put(tenant, studyId, { quotaGroups: [{ name: 'A', cap: 1, filter, answers: [{ questionKey: 'freq', choiceIds: ['weekly'] }] }] })).statusCode).toBe(200);
    const masked = (await list(tenant, studyId, noPii.token)).json<{ quotaGroups: Group[] }>().quotaGroups[0]!;
    expect(JSON.stringify(masked.filter)).not.toContain('hush');
    expect(masked.filter).toEqual({ operator: 'AND', filters: [{ property: { propertyId: Secret }, comparison: 'EQUALS', value: '***' }] });
    const noScreeners = await tenant.tokenFor('OBSERVER', { canReadScreeners: false });
    const hidden = (await list(tenant, studyId, noScreeners.token)).json<{ quotaGroups: Group[] }>().quotaGroups[0]!;
    expect(hidden.answers).toBeNull();
    expect((await list(tenant, studyId)).json<{ quotaGroups: Group[] }>().quotaGroups[0]!.answers).toEqual([{ questionKey: 'freq', choiceIds: ['weekly'] }]);
  });
});

describeSecurity('GET /studies/{studyId}/quota-groups', () => service, {
  method: 'GET',
  right: 'studies:read',
  addressesResource: true,
  request: async (tenant) => {
    const studyId = await createStudy(service, tenant, { studyType: 'INTERVIEWS' });
    return { url: `/studies/${studyId}/quota-groups` };
  },
});

describeSecurity('PUT /studies/{studyId}/quota-groups', () => service, {
  method: 'PUT',
  right: 'screeners:write',
  addressesResource: true,
  request: async (tenant) => {
    const studyId = await createStudy(service, tenant, { studyType: 'INTERVIEWS' });
    return { url: `/studies/${studyId}/quota-groups`, body: { quotaGroups: [{ name: 'Everyone', cap: 5 }] } };
  },
});

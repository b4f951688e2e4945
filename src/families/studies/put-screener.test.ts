import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, type Tenant, type TestService, startTestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';
import { createPerson, createProperties, createPropertyOfEveryType } from '../../../test/people-factory.js';
import { addParticipants } from '../../../test/participants-factory.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

async function createStudy(tenant: Tenant, body: object = {}) {
  const response = await call(service, 'POST', '/studies', {
    token: tenant.token,
    body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Checkout interviews' }, ...body },
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ studyId: string }>().studyId;
}

const putScreener = (tenant: Tenant, studyId: string, body: unknown) => call(service, 'PUT', `/studies/${studyId}/screener`, { token: tenant.token, body });

async function getStudy(tenant: Tenant, studyId: string) {
  const response = await call(service, 'GET', `/studies/${studyId}`, { token: tenant.token });
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

const shopChoices = [
  { id: 'weekly', label: 'Every week', rule: 'QUALIFIES' },
  { id: 'never', label: 'Never', rule: 'DISQUALIFIES' },
];
const firstQuestions = [
  { name: 'How often do you shop online?', type: 'SINGLE_SELECT', category: 'simple', isRequired: true, description: 'Pick one', choices: shopChoices },
  { name: 'Your email', type: 'EMAIL', category: 'contact', isRequired: true },
  { name: 'Anything else?', type: 'LONG_FORM', category: 'simple', isRequired: false, questionTemplateId: 'qt_1' },
];

describe('PUT /studies/{studyId}/screener', () => {
  it('creates a SERVICE screener with the questions in order and sets includeScreener true', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    expect((await getStudy(tenant, studyId)).studyPlan.includeScreener).toBe(false);

    const response = await putScreener(tenant, studyId, { qualifyByDefault: true, showSchedulerToQualified: true, questions: firstQuestions });
    expect(response.statusCode, response.body).toBe(200);
    const screener = response.json();
    expect(screener).toMatchObject({
      workspaceId: tenant.workspaceId,
      studyId,
      type: 'SERVICE',
      qualifyByDefault: true,
      showSchedulerToQualified: true,
      externalSurveyId: null,
      externalSurveySetupStatus: null,
    });
    const generated = { id: expect.stringMatching(/^sqn_/), key: expect.stringMatching(/^sqk_/), workspaceId: tenant.workspaceId };
    expect(screener.questions).toEqual([
      { ...firstQuestions[0], ...generated, mappedToPropertyId: null, questionTemplateId: null },
      { ...firstQuestions[1], ...generated, description: null, mappedToPropertyId: null, questionTemplateId: null },
      { ...firstQuestions[2], ...generated, description: null, mappedToPropertyId: null },
    ]);
    expect(screener.revision).toBe(1);
    expect(new Date(screener.createdAt).toISOString()).toBe(screener.createdAt);

    const study = await getStudy(tenant, studyId);
    expect(study.studyPlan.includeScreener).toBe(true);
    expect(study.screener).toEqual(screener);
  });

  it('replaces the questions in the new order, keeping the screener and unsent settings', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const first = (await putScreener(tenant, studyId, { qualifyByDefault: true, questions: firstQuestions })).json();

    const replacement = [
      { name: 'Which devices?', type: 'MULTI_SELECT', category: 'simple', isRequired: false, choices: [{ id: 'phone', label: 'Phone' }] },
      { name: 'How often do you shop online?', type: 'SINGLE_SELECT', category: 'simple', isRequired: true, choices: shopChoices },
    ];
    const response = await putScreener(tenant, studyId, { showSchedulerToQualified: true, questions: replacement });
    expect(response.statusCode, response.body).toBe(200);
    const second = response.json();
    expect(second.id).toBe(first.id);
    expect(second.createdAt).toBe(first.createdAt);
    expect(second).toMatchObject({ qualifyByDefault: true, showSchedulerToQualified: true, revision: 2 });
    expect(second.questions.map((question: { name: string }) => question.name)).toEqual(replacement.map((question) => question.name));
    const firstIds = first.questions.map((question: { id: string }) => question.id);
    for (const question of second.questions) expect(firstIds).not.toContain(question.id);
    expect((await getStudy(tenant, studyId)).screener).toEqual(second);

    // Nothing answered the first revision, so its versions are gone.
    const stored = await service.deps.db.selectFrom('screener_questions').where('workspace_id', '=', tenant.workspaceId).where('screener_id', '=', first.id).select('revision').execute();
    expect(stored).toEqual([{ revision: 2 }, { revision: 2 }]);
  });

  it('fills the empty screener that includeScreener made, and accepts an empty question list', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant, { studyPlan: { name: 'Screened', includeScreener: true } });
    const empty = (await getStudy(tenant, studyId)).screener;
    const filled = await putScreener(tenant, studyId, { questions: [{ name: 'Age?', type: 'NUMBER' }] });
    expect(filled.statusCode, filled.body).toBe(200);
    expect(filled.json().id).toBe(empty.id);
    expect(filled.json().questions).toEqual([expect.objectContaining({ name: 'Age?', type: 'NUMBER', category: 'simple', isRequired: false })]);
    const emptied = await putScreener(tenant, studyId, { questions: [] });
    expect(emptied.statusCode, emptied.body).toBe(200);
    expect(emptied.json().questions).toEqual([]);
  });

  it('leaves one screener holding one request\'s questions when requests race', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const bodies = Array.from({ length: 6 }, (_, index) => ({ questions: [{ name: `Q${index}a`, type: 'SHORT_FORM' }, { name: `Q${index}b`, type: 'NUMBER' }] }));
    const responses = await Promise.all(bodies.map((body) => putScreener(tenant, studyId, body)));
    for (const response of responses) expect(response.statusCode, response.body).toBe(200);
    const screener = (await getStudy(tenant, studyId)).screener;
    expect(new Set(responses.map((response) => response.json().id))).toEqual(new Set([screener.id]));
    const names = screener.questions.map((question: { name: string }) => question.name);
    expect(bodies.map((body) => body.questions.map((question) => question.name))).toContainEqual(names);
  });

  it('changes the screener of an active or paused study, and refuses a closed one (409) keeping its screener', async () => {
    const tenant = await createTenant(service);
    for (const move of [
      { path: 'launch', body: undefined, allowed: true },
      { path: 'status', body: { status: 'PAUSED' }, allowed: true },
      { path: 'status', body: { status: 'CLOSED' }, allowed: false },
    ]) {
      const studyId = await createStudy(tenant);
      const before = (await putScreener(tenant, studyId, { questions: firstQuestions })).json();
      const moved = await call(service, 'POST', `/studies/${studyId}/${move.path}`, { token: tenant.token, body: move.body });
      expect(moved.statusCode, moved.body).toBe(200);
      const response = await putScreener(tenant, studyId, { questions: [{ name: 'Age?', type: 'NUMBER' }] });
      if (move.allowed) {
        expect(response.statusCode, response.body).toBe(200);
        expect(response.json()).toMatchObject({ id: before.id, revision: 2, questions: [{ name: 'Age?' }] });
      } else {
        expect(response.statusCode).toBe(409);
        expect(response.json()).toEqual({ errors: [{ message: "A closed study's screener cannot change", path: ['studyId'] }] });
        expect((await getStudy(tenant, studyId)).screener).toEqual(before);
      }
    }
  });

  it('refuses a SURVEY study (400)', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant, { studyType: 'SURVEY' });
    const response = await putScreener(tenant, studyId, { questions: firstQuestions });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path: ['studyId'] }] });
    const study = await getStudy(tenant, studyId);
    expect(study.screener).toBeNull();
    expect(study.studyPlan.includeScreener).toBe(false);
  });

  it.each([
    ['missing questions', {}, ['questions']],
    ['an unknown field', { questions: [], intro: 'Hi' }, ['intro']],
    ['an unknown question field', { questions: [{ name: 'x', type: 'SHORT_FORM', options: [] }] }, ['questions', '0', 'options']],
    ['an unknown question type', { questions: [{ name: 'ok', type: 'SHORT_FORM' }, { name: 'x', type: 'ESSAY' }] }, ['questions', '1', 'type']],
    ['a key with a space', { questions: [{ key: 'a b', name: 'x', type: 'SHORT_FORM' }] }, ['questions', '0', 'key']],
    ['an unknown choice field', { questions: [{ name: 'x', type: 'SINGLE_SELECT', choices: [{ id: 'a', label: 'A', value: 1 }] }] }, ['questions', '0', 'choices', '0', 'value']],
    ['a choice without a label', { questions: [{ name: 'x', type: 'SINGLE_SELECT', choices: [{ id: 'a', label: 'A' }, { id: 'b' }] }] }, ['questions', '0', 'choices', '1', 'label']],
    ['an empty choice label', { questions: [{ name: 'x', type: 'SINGLE_SELECT', choices: [{ id: 'a', label: 'A' }, { id: 'b', label: '' }] }] }, ['questions', '0', 'choices', '1', 'label']],
    ['an unknown rule', { questions: [{ name: 'x', type: 'SINGLE_SELECT', choices: [{ id: 'a', label: 'A', rule: 'MAYBE' }] }] }, ['questions', '0', 'choices', '0', 'rule']],
    ['a range without its rule', { questions: [{ name: 'x', type: 'NUMBER', ranges: [{ min: 1 }] }] }, ['questions', '0', 'ranges', '0', 'rule']],
    ['a bound as text', { questions: [{ name: 'x', type: 'NUMBER', minimum: '1' }] }, ['questions', '0', 'minimum']],
    ['an unknown showWhen field', { questions: [{ name: 'x', type: 'SHORT_FORM', showWhen: { questionKey: 'a', equals: 'b' } }] }, ['questions', '0', 'showWhen', 'equals']],
    ['a select without choices', { questions: [{ name: 'x', type: 'SHORT_FORM' }, { name: 'y', type: 'MULTI_SELECT' }] }, ['questions', '1', 'choices']],
    ['a duplicate choice id', { questions: [{ name: 'x', type: 'SINGLE_SELECT', choices: [{ id: 'a', label: 'A' }, { id: 'a', label: 'B' }] }] }, ['questions', '0', 'choices', '1', 'id']],
    ['a duplicate key', { questions: [{ key: 'k', name: 'x', type: 'SHORT_FORM' }, { key: 'k', name: 'y', type: 'DATE' }] }, ['questions', '1', 'key']],
    ['choices on a number question', { questions: [{ name: 'x', type: 'NUMBER', choices: [{ id: 'a', label: 'A' }] }] }, ['questions', '0', 'choices']],
    ['ranges on a text question', { questions: [{ name: 'x', type: 'SHORT_FORM', ranges: [{ min: 1, rule: 'QUALIFIES' }] }] }, ['questions', '0', 'ranges']],
    ['overlapping ranges', { questions: [{ name: 'x', type: 'NUMBER', ranges: [{ max: 5, rule: 'QUALIFIES' }, { min: 5, rule: 'DISQUALIFIES' }] }] }, ['questions', '0', 'ranges', '1']],
    ['a SCALE without bounds', { questions: [{ name: 'x', type: 'SCALE', minimum: 1 }] }, ['questions', '0', 'maximum']],
    ['skip logic on a later question', { questions: [{ name: 'x', type: 'SHORT_FORM', showWhen: { questionKey: 'later', choiceIds: ['a'] } }, { key: 'later', name: 'y', type: 'YES_NO' }] }, ['questions', '0', 'showWhen', 'questionKey']],
    ['skip logic on an unknown choice', { questions: [{ key: 'f', name: 'x', type: 'YES_NO' }, { name: 'y', type: 'DATE', showWhen: { questionKey: 'f', choiceIds: ['maybe'] } }] }, ['questions', '1', 'showWhen', 'choiceIds', '0']],
    ['skip logic with a range on a select', { questions: [{ key: 'f', name: 'x', type: 'YES_NO' }, { name: 'y', type: 'DATE', showWhen: { questionKey: 'f', range: { min: 1 } } }] }, ['questions', '1', 'showWhen', 'range']],
    ['YES_NO with other choices', { questions: [{ name: 'x', type: 'YES_NO', choices: [{ id: 'si', label: 'Sí' }, { id: 'no', label: 'No' }] }] }, ['questions', '0', 'choices']],
    ['an unknown category', { questions: [{ name: 'x', type: 'SHORT_FORM', category: 'complex' }] }, ['questions', '0', 'category']],
    ['a question without a name', { questions: [{ type: 'SHORT_FORM' }] }, ['questions', '0', 'name']],
    ['an empty name', { questions: [{ name: '', type: 'SHORT_FORM' }] }, ['questions', '0', 'name']],
    ['isRequired as text', { questions: [{ name: 'x', type: 'SHORT_FORM', isRequired: 'true' }] }, ['questions', '0', 'isRequired']],
    ['questions as an object', { questions: { name: 'x' } }, ['questions']],
  ])('refuses %s with 400 naming its path and writes nothing', async (_what, body, path) => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const response = await putScreener(tenant, studyId, body);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
    expect((await getStudy(tenant, studyId)).screener).toBeNull();
    // Nor does it change a screener already there.
    const kept = (await putScreener(tenant, studyId, { questions: firstQuestions })).json();
    expect((await putScreener(tenant, studyId, body)).statusCode).toBe(400);
    expect((await getStudy(tenant, studyId)).screener).toEqual(kept);
  });

  it('refuses more than 200 questions (400)', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const questions = Array.from({ length: 201 }, (_, index) => ({ name: `Q${index}`, type: 'SHORT_FORM' }));
    const response = await putScreener(tenant, studyId, { questions });
    expect(response.statusCode).toBe(400);
    expect(response.json().errors[0].path).toEqual(['questions']);
    const accepted = await putScreener(tenant, studyId, { questions: questions.slice(0, 200) });
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(accepted.json().questions.map((question: { name: string }) => question.name)).toEqual(questions.slice(0, 200).map((question) => question.name));
  });

  it('answers an unknown id with 404 naming studyId', async () => {
    const tenant = await createTenant(service);
    const response = await putScreener(tenant, 'stu_doesnotexist', { questions: [] });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ errors: [{ message: 'Study not found', path: ['studyId'] }] });
  });

  it('answers null to a token that may write screeners but not read them, and still writes', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const { token } = await tenant.tokenFor('SUPER_ADMIN', { canReadScreeners: false });
    const response = await call(service, 'PUT', `/studies/${studyId}/screener`, { token, body: { questions: [{ name: 'Age?', type: 'NUMBER' }] } });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toBeNull();
    expect((await getStudy(tenant, studyId)).screener.questions).toEqual([expect.objectContaining({ name: 'Age?' })]);
  });
});

const fullDefinition = {
  qualifyByDefault: false,
  questions: [
    { key: 'freq', name: 'How often do you shop online?', type: 'SINGLE_SELECT', isRequired: true, choices: [...shopChoices, { id: 'monthly', label: 'Every month' }] },
    { key: 'orders', name: 'Orders last month?', type: 'NUMBER', minimum: 0, maximum: 1000, integer: true, ranges: [{ max: 0, rule: 'DISQUALIFIES' }, { min: 50, rule: 'QUALIFIES' }], showWhen: { questionKey: 'freq', choiceIds: ['weekly', 'monthly'] } },
    { key: 'devices', name: 'Which devices?', type: 'MULTI_SELECT', choices: [{ id: 'phone', label: 'Phone', rule: 'NEUTRAL' }, { id: 'none', label: 'None', rule: 'DISQUALIFIES' }] },
    { key: 'recorded', name: 'May we record the session?', type: 'YES_NO', isRequired: true, choices: [{ id: 'yes', label: 'Yes' }, { id: 'no', label: 'No', rule: 'DISQUALIFIES' }] },
    { key: 'adult', name: 'Are you over 18?', type: 'YES_NO' },
    { key: 'rating', name: 'How do you rate checkout?', type: 'SCALE', minimum: 1, maximum: 5, showWhen: { questionKey: 'orders', range: { min: 1, max: 1000 } } },
    { key: 'born', name: 'Date of birth', type: 'DATE', category: 'contact' },
  ],
};

describe('PUT /studies/{studyId}/screener: the definition', () => {
  it('keeps choices, rules, number rules and skip logic, with defaults filled in, and GET shows the same', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const response = await putScreener(tenant, studyId, fullDefinition);
    expect(response.statusCode, response.body).toBe(200);
    const screener = response.json();
    const common = { id: expect.stringMatching(/^sqn_/), workspaceId: tenant.workspaceId, category: 'simple', isRequired: false, description: null, mappedToPropertyId: null, questionTemplateId: null };
    expect(screener.questions).toEqual([
      { ...common, ...fullDefinition.questions[0], choices: [...shopChoices, { id: 'monthly', label: 'Every month', rule: 'NEUTRAL' }] },
      { ...common, ...fullDefinition.questions[1] },
      { ...common, ...fullDefinition.questions[2] },
      { ...common, ...fullDefinition.questions[3], choices: [{ id: 'yes', label: 'Yes', rule: 'NEUTRAL' }, { id: 'no', label: 'No', rule: 'DISQUALIFIES' }] },
      // A YES_NO question without choices stores none: the rules give it yes and no, both neutral.
      { ...common, ...fullDefinition.questions[4] },
      { ...common, ...fullDefinition.questions[5], integer: true, ranges: [] },
      { ...common, ...fullDefinition.questions[6] },
    ]);
    expect((await getStudy(tenant, studyId)).screener).toEqual(screener);
  });

  it('carries the whole definition to a duplicated study and through a template', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const original = (await putScreener(tenant, studyId, fullDefinition)).json();
    const strip = (questions: { id: string }[]) => questions.map(({ id: _id, ...rest }) => rest);
    const copy = await createStudy(tenant, { idOfStudyToDuplicate: studyId, studyPlan: {} });
    expect(strip((await getStudy(tenant, copy)).screener.questions)).toEqual(strip(original.questions));
    const template = await call(service, 'POST', '/study-templates', { token: tenant.token, body: { studyId, name: 'Screened' } });
    expect(template.statusCode, template.body).toBe(201);
    const fromTemplate = await createStudy(tenant, { studyTemplateId: template.json().studyTemplateId, studyPlan: {} });
    expect(strip((await getStudy(tenant, fromTemplate)).screener.questions)).toEqual(strip(original.questions));
  });

  it('reports every problem of a definition at once, each with its path and what is allowed', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const response = await putScreener(tenant, studyId, {
      questions: [
        { key: 'freq', name: 'x', type: 'SINGLE_SELECT', choices: [{ id: 'a', label: 'Same' }, { id: 'b', label: 'same' }] },
        { name: 'y', type: 'NUMBER', minimum: 10, maximum: 1 },
        { name: 'z', type: 'DATE', showWhen: { questionKey: 'freq', choiceIds: ['c'] } },
      ],
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      errors: [
        { message: 'this label is already the label of choices/0; labels are unique within a question (ignoring case)', path: ['questions', '0', 'choices', '1', 'label'] },
        { message: 'maximum must be at least minimum (10)', path: ['questions', '1', 'maximum'] },
        { message: 'c is not a choice id of questions/0 (a, b)', path: ['questions', '2', 'showWhen', 'choiceIds', '0'] },
      ],
    });
    expect((await getStudy(tenant, studyId)).screener).toBeNull();
  });
});

describe('PUT /studies/{studyId}/screener: mapped properties', () => {
  const select = (type: string, labels: string[]) => ({ type, choices: labels.map((label, index) => ({ id: `c${index}`, label })) });
  // question fields → the property type it maps to
  const compatible: [object, string][] = [
    [{ type: 'SHORT_FORM' }, 'STRING'],
    [{ type: 'LONG_FORM' }, 'STRING'],
    [{ type: 'EMAIL' }, 'STRING'],
    [{ type: 'PHONE_NUMBER' }, 'STRING'],
    [{ type: 'NUMBER' }, 'NUMBER'],
    [{ type: 'SCALE', minimum: 1, maximum: 5 }, 'NUMBER'],
    [{ type: 'DATE' }, 'DATETIME'],
    [{ type: 'YES_NO' }, 'BOOLEAN'],
    [select('SINGLE_SELECT', ['red', 'Blue']), 'SINGLE_SELECT'],
    [select('MULTI_SELECT', ['Green']), 'MULTI_SELECT'],
  ];

  it('accepts each question type mapped to its property type and refuses it mapped to any other', async () => {
    const tenant = await createTenant(service);
    const properties = await createPropertyOfEveryType(service, tenant);
    const studyId = await createStudy(tenant);
    for (const [question, propertyType] of compatible) {
      for (const [candidateType, propertyId] of Object.entries(properties)) {
        const response = await putScreener(tenant, studyId, { questions: [{ name: 'Q', ...question, mappedToPropertyId: propertyId }] });
        if (candidateType === propertyType) {
          expect(response.statusCode, `${JSON.stringify(question)} → ${candidateType}: ${response.body}`).toBe(200);
          expect(response.json().questions[0].mappedToPropertyId).toBe(propertyId);
        } else {
          expect(response.statusCode, `${JSON.stringify(question)} → ${candidateType}`).toBe(400);
          expect(response.json()).toEqual({
            errors: [{ message: expect.stringContaining(`maps only to a ${propertyType} property; this property is ${candidateType}`), path: ['questions', '0', 'mappedToPropertyId'] }],
          });
        }
      }
    }
  });

  it("refuses a select question whose choice labels are not the property's options, naming each label", async () => {
    const tenant = await createTenant(service);
    const { SINGLE_SELECT: colour } = await createPropertyOfEveryType(service, tenant);
    const studyId = await createStudy(tenant);
    const before = (await putScreener(tenant, studyId, { questions: [{ name: 'Favourite colour', ...select('SINGLE_SELECT', ['Red']), mappedToPropertyId: colour }] })).json();
    const response = await putScreener(tenant, studyId, { questions: [{ name: 'Favourite colour', ...select('SINGLE_SELECT', ['Red', 'Mauve', 'GREEN', 'Teal']), mappedToPropertyId: colour }] });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      errors: [
        { message: 'the mapped property has no option named like this label; its options are: Red, Green, Blue', path: ['questions', '0', 'choices', '1', 'label'] },
        { message: 'the mapped property has no option named like this label; its options are: Red, Green, Blue', path: ['questions', '0', 'choices', '3', 'label'] },
      ],
    });
    expect((await getStudy(tenant, studyId)).screener).toEqual(before);
  });

  it("answers an unknown property and another workspace's alike: 404 naming the field, and changes nothing", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    const { Secret: foreign } = await createProperties(service, other, [{ name: 'Secret', propertyType: 'STRING' }]);
    const studyId = await createStudy(tenant);
    const before = (await putScreener(tenant, studyId, { questions: firstQuestions })).json();
    const answers = [];
    for (const propertyId of [foreign!, 'ppr_doesnotexist']) {
      const response = await putScreener(tenant, studyId, { questions: [{ name: 'Ok', type: 'DATE' }, { name: 'Q', type: 'SHORT_FORM', mappedToPropertyId: propertyId }] });
      expect(response.statusCode).toBe(404);
      answers.push(response.json());
    }
    expect(answers[0]).toEqual({ errors: [{ message: 'Property not found', path: ['questions', '1', 'mappedToPropertyId'] }] });
    expect(answers[1]).toEqual(answers[0]);
    expect((await getStudy(tenant, studyId)).screener).toEqual(before);
  });

  it('refuses two questions mapped to one property', async () => {
    const tenant = await createTenant(service);
    const { STRING: nickname } = await createPropertyOfEveryType(service, tenant);
    const studyId = await createStudy(tenant);
    const response = await putScreener(tenant, studyId, {
      questions: [
        { name: 'Nickname', type: 'SHORT_FORM', mappedToPropertyId: nickname },
        { name: 'Nickname again', type: 'LONG_FORM', mappedToPropertyId: nickname },
      ],
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.stringMatching(/^questions\/0 already maps to this property/), path: ['questions', '1', 'mappedToPropertyId'] }] });
  });
});

describe('PUT /studies/{studyId}/screener: versions of questions', () => {
  it('keeps the versions that were answered, as they were asked, and points the screener at the new ones', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const first = (await putScreener(tenant, studyId, fullDefinition)).json();
    const launched = await call(service, 'POST', `/studies/${studyId}/launch`, { token: tenant.token });
    expect(launched.statusCode, launched.body).toBe(200);
    const person = await createPerson(service, tenant);
    const [participant] = await addParticipants(service, tenant, studyId, [person.personId]);
    // The submission flow writes answers; here one row stands for it.
    const answered = first.questions[0];
    await service.deps.db
      .insertInto('screener_answers')
      .values({ workspace_id: tenant.workspaceId, participant_id: participant!.participantId, question_id: answered.id, value: JSON.stringify('weekly'), answered_at: new Date().toISOString() })
      .execute();

    const edited = { ...fullDefinition, questions: [{ ...fullDefinition.questions[0], name: 'How often do you buy online?', choices: [{ id: 'weekly', label: 'Weekly', rule: 'NEUTRAL' }] }] };
    const second = (await putScreener(tenant, studyId, edited)).json();
    expect(second).toMatchObject({ id: first.id, revision: 2, questions: [{ key: 'freq', name: 'How often do you buy online?' }] });
    expect(second.questions[0].id).not.toBe(answered.id);

    const kept = await service.deps.db
      .selectFrom('screener_answers as a')
      .innerJoin('screener_questions as q', (join) => join.onRef('q.workspace_id', '=', 'a.workspace_id').onRef('q.question_id', '=', 'a.question_id'))
      .where('a.workspace_id', '=', tenant.workspaceId)
      .select(['q.question_id', 'q.question_key', 'q.revision', 'q.name', 'q.choices', 'a.value'])
      .execute();
    expect(kept).toEqual([{ question_id: answered.id, question_key: 'freq', revision: 1, name: answered.name, choices: answered.choices, value: 'weekly' }]);
    // The first revision's unanswered versions are gone; the answered one stays beside revision 2's.
    const rows = await service.deps.db.selectFrom('screener_questions').where('workspace_id', '=', tenant.workspaceId).where('screener_id', '=', first.id).select(['question_id', 'revision']).orderBy('revision').execute();
    expect(rows).toEqual([{ question_id: answered.id, revision: 1 }, { question_id: second.questions[0].id, revision: 2 }]);

    // A third revision still keeps the answered version.
    const third = (await putScreener(tenant, studyId, { questions: [] })).json();
    expect(third).toMatchObject({ revision: 3, questions: [] });
    const left = await service.deps.db.selectFrom('screener_questions').where('workspace_id', '=', tenant.workspaceId).where('screener_id', '=', first.id).select('question_id').execute();
    expect(left).toEqual([{ question_id: answered.id }]);
    expect((await getStudy(tenant, studyId)).screener).toEqual(third);
  });

  it('refuses to delete a screener whose questions were answered (409) and deletes one without answers', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const screener = (await putScreener(tenant, studyId, fullDefinition)).json();
    const person = await createPerson(service, tenant);
    const [participant] = await addParticipants(service, tenant, studyId, [person.personId]);
    await service.deps.db
      .insertInto('screener_answers')
      .values({ workspace_id: tenant.workspaceId, participant_id: participant!.participantId, question_id: screener.questions[0].id, value: JSON.stringify('never'), answered_at: new Date().toISOString() })
      .execute();
    const refused = await call(service, 'DELETE', `/studies/${studyId}/screener`, { token: tenant.token });
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual({ errors: [{ message: 'The screener has answers; they keep the questions they answered', path: ['studyId'] }] });
    expect((await getStudy(tenant, studyId)).screener).toEqual(screener);
  });
});

describeSecurity('PUT /studies/{studyId}/screener', () => service, {
  method: 'PUT',
  right: 'screeners:write',
  addressesResource: true,
  request: async (tenant) => ({ url: `/studies/${await createStudy(tenant)}/screener`, body: { questions: firstQuestions } }),
});

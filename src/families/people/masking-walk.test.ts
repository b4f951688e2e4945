import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, type TestService } from '../../../test/harness.js';
import { startPrivateTestService } from '../../../test/private-database.js';
import { createProperties } from '../../../test/people-factory.js';
import { type SmtpReceiver, smtpConfig, startSmtpReceiver } from '../../../test/smtp-receiver.js';
import { createTemplate, runMail } from '../messages/test-support.js';
import { createForm, submit } from '../signups/test-support.js';
import { submitScreener } from '../screener-responses/service.js';
import * as scheduling from '../scheduling/service.js';

/**
 * Issue 32, item 1: personal data reaches no one without the right, through any field. Every read
 * of the API (each GET of the OpenAPI description, and the searches) is called with a token
 * without the personal-data right, after one person with distinctive values went through people,
 * studies, messages (sent and bounced), incentives, consents and signups; no answer may hold any
 * of those values, in any field, however nested. Routes are read from openapi.json, so a read
 * added later is walked too (its path parameters must be named below, or the test says so).
 */

let receiver: SmtpReceiver;
let service: TestService;
beforeAll(async () => {
  receiver = await startSmtpReceiver();
  service = await startPrivateTestService(smtpConfig(receiver));
});
afterAll(async () => {
  await service.stop();
  await receiver.close();
});

const letters = (length: number) => Array.from({ length }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join('');

describe('a token without the personal-data right', () => {
  it('reads none of a person\'s values through any read of the API', async () => {
    const tenant = await createTenant(service);
    const blind = (await tenant.tokenFor('SUPER_ADMIN', { canReadPersonalData: false })).token;
    const tag = letters(10);
    const values = {
      email: `walked.${tag}@example.test`,
      bounced: `bounced.${tag}@example.test`,
      firstName: `Ottoline${tag}`,
      lastName: `Featherstone${tag}`,
      phone: '+44 20 7946 0733',
      secret: `secret-${tag}`,
    };
    const { Secret } = await createProperties(service, tenant, [{ name: 'Secret', propertyType: 'STRING', isPII: true }]);
    const person = await call(service, 'POST', '/people', { token: tenant.token, body: { email: values.email, firstName: values.firstName, lastName: values.lastName, phone: values.phone, properties: { [Secret!]: values.secret } } });
    const personId = person.json<{ personId: string }>().personId;
    const other = await call(service, 'POST', '/people', { token: tenant.token, body: { email: values.bounced, firstName: values.firstName } });
    const otherId = other.json<{ personId: string }>().personId;
    const study = await call(service, 'POST', '/studies', { token: tenant.token, body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Walk', consentFormId: 'walk-terms' } } });
    const studyId = study.json<{ studyId: string }>().studyId;
    await call(service, 'POST', `/studies/${studyId}/launch`, { token: tenant.token });
    const added = await call(service, 'POST', `/studies/${studyId}/participants`, { token: tenant.token, body: { personIds: [personId, otherId] } });
    const [participantId, otherParticipantId] = added.json<{ results: { participantId: string }[] }>().results.map((result) => result.participantId);
    // The person answers the screener: a question mapped to the PII property, and an email question.
    const screener = await call(service, 'PUT', `/studies/${studyId}/screener`, {
      token: tenant.token,
      body: {
        questions: [
          { key: 'secret', name: 'Your secret', type: 'SHORT_FORM', isRequired: true, mappedToPropertyId: Secret },
          { key: 'mail', name: 'Your email', type: 'EMAIL', isRequired: true },
        ],
      },
    });
    expect(screener.statusCode, screener.body).toBe(200);
    const questionIds = await service.deps.db.selectFrom('screener_questions').select(['question_key', 'question_id']).where('workspace_id', '=', tenant.workspaceId).execute();
    const questionOf = (key: string) => questionIds.find((question) => question.question_key === key)!.question_id;
    const answered = await submitScreener(service.deps.db, {
      workspaceId: tenant.workspaceId,
      studyId,
      participantId: participantId!,
      linkId: 'lnk_walk',
      answers: { [questionOf('secret')]: values.secret, [questionOf('mail')]: values.email },
      startedAt: null,
      suspectedBot: false,
      at: new Date().toISOString(),
    });
    expect(answered.kind).toBe('RECORDED');
    const templateId = await createTemplate(service, tenant);
    receiver.refuseRecipient(values.bounced, { code: 550, message: `5.1.1 <${values.bounced}> ${values.firstName} unknown` });
    expect((await call(service, 'POST', `/studies/${studyId}/messages`, { token: tenant.token, body: { templateId, participantIds: [participantId, otherParticipantId] } })).statusCode).toBe(200);
    expect(await runMail(service, tenant)).toMatchObject({ sent: 1, failed: 1 });
    const incentive = await call(service, 'POST', '/incentives', { token: tenant.token, body: { participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: 500 } });
    const consent = await call(service, 'POST', '/consent-submissions', { token: tenant.token, body: { personId, studyId, text: 'I agree' } });
    const form = await createForm(service, tenant, { consentFormId: 'walk-terms' });
    const submission = await submit(service, form.signupFormId, { email: values.email, referralCode: 'WALK' });
    const messages = await call(service, 'GET', '/messages', { token: tenant.token, query: { status: 'FAILED' } });
    const segment = await call(service, 'POST', '/segments', { token: tenant.token, body: { name: 'Everyone', filter: { filters: [] } } });
    // A quota group whose filter compares the person's secret: GET /studies/{studyId}/quota-groups masks it.
    const quotas = await call(service, 'PUT', `/studies/${studyId}/quota-groups`, { token: tenant.token, body: { quotaGroups: [{ name: 'Secret keepers', cap: 3, filter: { filters: [{ property: { propertyId: Secret }, comparison: 'EQUALS', value: values.secret }] } }] } });
    expect(quotas.statusCode, quotas.body).toBe(200);
    // A session the person booked, then canceled on their page giving a reason in their own words (the secret): GET …/bookings masks it.
    const allDay = [{ start: '00:00', end: '24:00' }];
    const weeklyHours = Object.fromEntries(['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'].map((day) => [day, allDay]));
    expect((await call(service, 'PUT', `/studies/${studyId}/schedule`, { token: tenant.token, body: { hosts: [{ userId: tenant.userId, timeZone: 'UTC', weeklyHours, overrides: [] }] } })).statusCode).toBe(200);
    const slots = (await call(service, 'GET', `/studies/${studyId}/slots`, { token: tenant.token })).json<{ slots: { startTime: string }[] }>().slots;
    const open = slots.find((slot) => Date.parse(slot.startTime) > Date.now() + 2 * 86_400_000)!;
    const booking = await scheduling.book(service.deps.tenantDb(tenant.workspaceId), service.deps.clock, { workspaceId: tenant.workspaceId, studyId, participantId: participantId!, startTime: open.startTime, personTimeZone: 'Europe/Berlin', actor: { by: 'PERSON' } });
    await scheduling.cancel(service.deps.tenantDb(tenant.workspaceId), service.deps.clock, { workspaceId: tenant.workspaceId, studyId, bookingId: booking.booking_id, reason: `Because ${values.secret}`, actor: { by: 'PERSON' } });

    const ids: Record<string, string | undefined> = {
      studyId,
      personId,
      personIdOrEmail: personId,
      participantId,
      incentiveId: incentive.json<{ incentiveId: string }>().incentiveId,
      // The bounced one: its failure quoted the address and the name.
      messageId: messages.json<{ results: { messageId: string }[] }>().results[0]?.messageId,
      templateId,
      signupFormId: form.signupFormId,
      submissionId: submission.json<{ submissionId: string }>().submissionId,
      consentSubmissionId: consent.json<{ consentSubmissionId: string }>().consentSubmissionId,
      segmentId: segment.json<{ segmentId?: string }>().segmentId,
      bookingId: booking.booking_id,
      // A staff user of the workspace (their own email is no panel person's).
      userId: tenant.userId,
    };
    // Parameters no personal data hangs off (or that are not reads of the workspace's data).
    // Consent forms are the workspace's texts, not a person's; branding configs its pages' look;
    // budgets a name, a currency and sums (each payment is read through its incentive and the ledger).
    // A backfill's report names rows and columns, never a cell's value (backfills.test.ts).
    const skipped = new Set(['studyTemplateId', 'propertyGroupId', 'importId', 'endpointId', 'token', 'consentFormId', 'version', 'brandingConfigId', 'budgetId', 'backfillId']);
    const openapi = JSON.parse(readFileSync('openapi.json', 'utf8')) as { paths: Record<string, { get?: unknown }> };
    const reads: string[] = [];
    for (const [path, operations] of Object.entries(openapi.paths)) {
      if (!operations.get || path.includes('test-helpers')) continue;
      const names = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
      if (names.some((name) => skipped.has(name))) continue;
      for (const name of names) expect(ids[name], `a value for {${name}} of GET ${path}`).toBeDefined();
      reads.push(names.reduce((url, name) => url.replace(`{${name}}`, encodeURIComponent(ids[name]!)), path.replace(/^\/v1/, '')));
    }
    expect(reads).toEqual(expect.arrayContaining(['/messages', `/messages/${ids.messageId}`, `/people/${personId}`, `/incentives/${ids.incentiveId}`, `/studies/${studyId}/participants/${participantId}`, `/studies/${studyId}/participants/${participantId}/screener-response`, `/studies/${studyId}/screener-responses/export`]));

    const answers: [string, string][] = [];
    for (const url of reads) {
      const response = await call(service, 'GET', url, { token: blind });
      expect(response.statusCode, `GET ${url}: ${response.body}`).toBeLessThan(500);
      answers.push([`GET ${url}`, response.body]);
    }
    const searches: [string, object][] = [
      ['/people/search', {}],
      [`/studies/${studyId}/participants/search`, {}],
      ['/incentives/search', {}],
      [`/signups/${form.signupFormId}/submissions/search`, {}],
      [`/message-templates/${templateId}/preview`, { personId, studyId }],
    ];
    for (const [url, body] of searches) {
      const response = await call(service, 'POST', url, { token: blind, body });
      expect(response.statusCode, `POST ${url}: ${response.body}`).toBe(200);
      answers.push([`POST ${url}`, response.body]);
    }
    // The same reads with the right do show the values (or this walk would prove nothing).
    expect((await call(service, 'GET', `/people/${personId}`, { token: tenant.token })).body).toContain(values.firstName);
    expect((await call(service, 'GET', '/messages', { token: tenant.token, query: { personId } })).json<{ total: number }>().total).toBe(1);
    expect((await call(service, 'GET', `/studies/${studyId}/screener-responses/export`, { token: tenant.token })).body).toContain(values.secret);
    for (const [what, body] of answers) {
      for (const value of Object.values(values)) expect(body.toLowerCase(), `${what} holds ${value}`).not.toContain(value.toLowerCase());
    }
  });
});

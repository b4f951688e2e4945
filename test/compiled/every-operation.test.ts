import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient, type RecruitClient, unwrap, verifyWebhook } from '@recruit-ops/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiPath } from '../../scripts/write-openapi.js';
import { testImages } from '../../src/families/branding/test-images.js';
import { bundleFiles, type CompiledServer, type CompiledStore, createCompiledStore, loadedScripts, runCompiledCli, startCompiledServer } from '../compiled-server.js';
import { storeKind } from '../harness.js';
import { freePort } from '../processes.js';
import { operationsOf, type OpenApiDocument } from '../openapi-arbitraries.js';
import { signInAtProvider, startIdentityProvider, type TestIdentityProvider } from '../oidc-provider.js';
import { type SmtpReceiver, startSmtpReceiver, unsubscribeLinkOf } from '../smtp-receiver.js';
import { WebhookReceiver } from '../webhook-receiver.js';

/**
 * What `npm start` runs, proven: every operation of the committed OpenAPI document answers its
 * success status at least once from the compiled server (`node dist/server.js`, the start
 * script's flags) in a child process, on this run's store, with background work, mail through a
 * real SMTP server and webhooks to a real receiver. The walk goes through the SDK, so a request
 * the document describes wrongly fails here too. Then V8's own record of the scripts the server
 * loaded must name every file of the bundle: a module loaded on first use (LiquidJS, nodemailer,
 * undici, ipaddr.js, whatever comes later) that no request reaches fails this file, not a user.
 *
 * The sources' suite went green while this build answered 500 to every template and delivered
 * no webhook (esbuild's chunks of those CommonJS packages export only `default`).
 */

const document = JSON.parse(readFileSync(openApiPath, 'utf8')) as OpenApiDocument;

/** The status an operation answers when it does what it is for: the least 2xx it documents (a browser's step of single sign-on: its redirect). */
const successOf = (responses: Record<string, unknown>) => {
  const statuses = Object.keys(responses).sort();
  return statuses.find((status) => /^2\d\d$/.test(status)) ?? statuses.find((status) => /^3\d\d$/.test(status));
};

describe(`every operation through the compiled server (${storeKind} store)`, () => {
  let store: CompiledStore;
  let server: CompiledServer;
  let smtp: SmtpReceiver;
  let hooks: WebhookReceiver;
  let idp: TestIdentityProvider;
  let token: string;
  let approverToken: string;
  let approverId: string;
  const coverageDir = mkdtempSync(path.join(tmpdir(), 'recruit-ops-coverage-'));
  /** Per operation (`GET /studies/{studyId}`), every status it answered in the walk. */
  const answered = new Map<string, number[]>();
  /** Every successful write of the walk: its operation, its request id (X-Request-Id answered) and whether a token made it. */
  const writes: { operation: string; requestId: string; withToken: boolean }[] = [];
  let serverEnv: Record<string, string>;

  /** A client of the compiled server that records each operation's status. */
  const clientFor = (bearer?: string): RecruitClient => {
    const client = createClient({ baseUrl: server.api, ...(bearer ? { token: bearer } : {}), retries: false });
    client.use({
      onResponse({ request, schemaPath, response }) {
        const operation = `${request.method} ${schemaPath}`;
        answered.set(operation, [...(answered.get(operation) ?? []), response.status]);
        if (request.method !== 'GET' && response.status < 400) writes.push({ operation, requestId: response.headers.get('x-request-id') ?? '', withToken: bearer !== undefined });
      },
    });
    return client;
  };

  beforeAll(async () => {
    [store, smtp, hooks] = await Promise.all([createCompiledStore(), startSmtpReceiver(), WebhookReceiver.start()]);
    // The workspace is made by the CLI before the server starts: the embedded store's data directory is one process's at a time.
    const created = await runCompiledCli<{ token: string; workspaceId: string }>(['workspace', 'create', '--name', 'Compiled walk', '--email', 'owner@compiled.example.test'], store.env);
    token = created.token;
    // A second person who may approve incentives (never their sender).
    const approver = await runCompiledCli<{ userId: string }>(['user', 'create', '--workspace', created.workspaceId, '--email', 'approver@compiled.example.test', '--role', 'OPS_MANAGER'], store.env);
    ({ token: approverToken } = await runCompiledCli<{ token: string }>(['token', 'create', '--user', approver.userId], store.env));
    approverId = approver.userId;
    serverEnv = {
      ...store.env,
      JOBS: 'on',
      JOB_POLL_SECONDS: '0.1',
      RATE_LIMIT_MAX: '100000',
      WEBHOOK_ALLOW_HTTP: 'on',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'on',
      SMTP_HOST: '127.0.0.1',
      SMTP_PORT: String(smtp.port),
      SMTP_SECURITY: 'none',
      MAIL_FROM: 'Research Team <research@compiled.example.test>',
      OIDC_ALLOW_HTTP: 'on',
      OIDC_ALLOW_PRIVATE_ISSUERS: 'on',
    };
    const port = await freePort();
    serverEnv.PUBLIC_URL = `http://127.0.0.1:${port}`;
    idp = await startIdentityProvider({ redirectUris: [`${serverEnv.PUBLIC_URL}/v1/session/oidc/callback`] });
    server = await startCompiledServer(serverEnv, { coverageDir, port });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await Promise.all([smtp?.close(), hooks?.close(), idp?.close(), store?.drop()]);
    rmSync(coverageDir, { recursive: true, force: true });
  });

  it('answers every documented operation with its success status, mail and webhooks delivered', async () => {
    const api = clientFor(token);
    const visitor = clientFor();

    // Who am I, and the workspace's teams.
    const me = unwrap(await api.GET('/me'));
    expect(me.role).toBe('SUPER_ADMIN');
    unwrap(await api.GET('/teams'));

    // The workspace's users, teams, custom roles and API keys.
    unwrap(await api.GET('/users'));
    const approverPath = { params: { path: { userId: approverId } } };
    unwrap(await api.GET('/users/{userId}', approverPath));
    unwrap(await api.PATCH('/users/{userId}', { ...approverPath, body: { jobRole: 'Budget holder' } }));
    unwrap(await api.POST('/users/{userId}/deactivate', approverPath));
    unwrap(await api.POST('/users/{userId}/reactivate', approverPath));
    const readers = unwrap(await api.POST('/custom-roles', { body: { name: 'Compiled readers', rights: ['studies:read'] } }));
    const readersPath = { params: { path: { roleId: readers.customRoleId } } };
    unwrap(await api.GET('/custom-roles'));
    unwrap(await api.PATCH('/custom-roles/{roleId}', { ...readersPath, body: { rights: ['studies:read', 'people:read'] } }));
    unwrap(await api.DELETE('/custom-roles/{roleId}', readersPath));
    const team = unwrap(await api.POST('/teams', { body: { name: 'Compiled team' } }));
    const memberPath = { params: { path: { teamId: team.teamId, userId: approverId } } };
    unwrap(await api.PATCH('/teams/{teamId}', { params: { path: { teamId: team.teamId } }, body: { name: 'Compiled squad' } }));
    unwrap(await api.PUT('/teams/{teamId}/members/{userId}', memberPath));
    unwrap(await api.DELETE('/teams/{teamId}/members/{userId}', memberPath));
    unwrap(await api.DELETE('/teams/{teamId}', { params: { path: { teamId: team.teamId } } }));
    const firstKey = unwrap(await api.POST('/api-keys', { body: { name: 'Compiled key', rights: ['studies:read'] } }));
    const secondKey = unwrap(await api.POST('/api-keys', { body: { name: 'Compiled key 2' } }));
    unwrap(await api.GET('/api-keys'));
    unwrap(await api.GET('/users/{userId}/api-keys', { params: { path: { userId: me.userId } } }));
    unwrap(await api.DELETE('/api-keys/{keyId}', { params: { path: { keyId: firstKey.keyId } } }));
    unwrap(await api.DELETE('/users/{userId}/api-keys/{keyId}', { params: { path: { userId: me.userId, keyId: secondKey.keyId } } }));

    // Webhooks first, so that every event below is pushed to the receiver.
    const endpoint = unwrap(await api.POST('/webhook-endpoints', { body: { url: hooks.url('/compiled'), description: 'Compiled walk' } }));
    const endpointPath = { params: { path: { endpointId: endpoint.endpointId } } };
    unwrap(await api.GET('/webhook-endpoints'));
    unwrap(await api.GET('/webhook-endpoints/{endpointId}', endpointPath));
    unwrap(await api.PATCH('/webhook-endpoints/{endpointId}', { ...endpointPath, body: { description: 'Compiled walk, every event' } }));
    unwrap(await api.GET('/webhook-event-types'));
    // The test event goes through undici (loaded on first send) to the receiver, signed with the endpoint's secret.
    const tested = unwrap(await api.POST('/webhook-endpoints/{endpointId}/test', endpointPath));
    expect(tested).toMatchObject({ succeeded: true, responseStatus: 200 });
    await hooks.waitFor(1);
    expect(verifyWebhook(endpoint.secret, hooks.received[0]!.headers as Record<string, string>, hooks.received[0]!.body)).toMatchObject({ type: expect.any(String) });

    // Properties and groups.
    const imported = unwrap(
      await api.POST('/properties/import', {
        body: [
          { name: 'Age', propertyType: 'NUMBER' },
          { name: 'Plan', propertyType: 'SINGLE_SELECT', propertyOptions: [{ name: 'Free' }, { name: 'Pro' }] },
          { name: 'Retired note', propertyType: 'STRING' },
          { name: 'Retired flag', propertyType: 'BOOLEAN' },
        ],
      }),
    );
    const propertyIdOf = (name: string) => imported.results.find(({ personProperty }) => personProperty.name === name)!.personProperty.propertyId;
    const properties = unwrap(await api.GET('/properties'));
    expect(properties.results.map((property) => property.name)).toEqual(expect.arrayContaining(['Age', 'Plan']));
    unwrap(await api.PATCH('/properties/{propertyId}', { params: { path: { propertyId: propertyIdOf('Plan') } }, body: { editableByPerson: true } }));
    unwrap(await api.DELETE('/properties/{propertyId}', { params: { path: { propertyId: propertyIdOf('Retired note') } } }));
    unwrap(await api.POST('/properties/delete', { body: { propertyIds: [propertyIdOf('Retired flag')] } }));
    const group = unwrap(await api.POST('/property-groups', { body: { name: 'Profile', scopeType: 'ALL', propertyIds: [propertyIdOf('Age'), propertyIdOf('Plan')] } }));
    unwrap(await api.GET('/property-groups'));
    unwrap(await api.GET('/property-groups/{propertyGroupId}/properties', { params: { path: { propertyGroupId: group.propertyGroupId } } }));

    // Populations and people.
    const { populationId } = unwrap(await api.POST('/populations', { body: { name: 'Compiled panel' } }));
    unwrap(await api.GET('/populations'));
    const ada = unwrap(await api.POST('/people', { body: { email: 'ada@compiled.example.test', firstName: 'Ada', lastName: 'Lovelace', properties: { [propertyIdOf('Age')]: 36, [propertyIdOf('Plan')]: 'Pro' } } }));
    const grace = unwrap(await api.POST('/people', { body: { email: 'grace@compiled.example.test', firstName: 'Grace', lastName: 'Hopper' } }));
    const adaPath = { params: { path: { personId: ada.personId } } };
    unwrap(await api.POST('/populations/{populationId}/members', { params: { path: { populationId } }, body: { personIds: [ada.personId, grace.personId] } }));
    unwrap(await api.GET('/people/{personId}', adaPath));
    unwrap(await api.PATCH('/people/{personId}', { ...adaPath, body: { phone: '+442079460000' } }));
    const found = unwrap(
      await api.POST('/people/search', { body: { filter: { filters: [{ property: { propertyId: propertyIdOf('Age') }, comparison: 'GREATER_THAN', value: 30 }] } } }),
    );
    expect(found.results.map((person) => person.personId)).toEqual([ada.personId]);

    // An import, completed by the server's background work.
    const csv = 'email,firstName,lastName,Age\nkatherine@compiled.example.test,Katherine,Johnson,41\nmary@compiled.example.test,Mary,Jackson,29\n';
    const { importId } = unwrap(await api.POST('/imports', { body: csv, params: { query: { populationId } } }));
    let importState = unwrap(await api.GET('/imports/{importId}', { params: { path: { importId } } }));
    for (let attempt = 0; attempt < 300 && (importState.status === 'QUEUED' || importState.status === 'RUNNING'); attempt++) {
      await sleep(100);
      importState = unwrap(await api.GET('/imports/{importId}', { params: { path: { importId } } }));
    }
    expect(importState).toMatchObject({ status: 'COMPLETED', rowsImported: 2, rowsFailed: 0 });

    // A backfill of the two people's history (restricted access: the workspace's SUPER_ADMIN), with one refused row.
    const history = 'email,studyKey,studyName,status,invitedAt,interviewStartTime,incentiveAmount\n' +
      'katherine@compiled.example.test,OLD-1,Old interviews,COMPLETED,2025-03-01,2025-03-08T15:00:00Z,75\nmary@compiled.example.test,OLD-1,,DONE,2025-03-01,,\n';
    const { backfillId } = unwrap(await api.POST('/backfills', { body: history }));
    const backfillPath = { params: { path: { backfillId } } };
    let backfillState = unwrap(await api.GET('/backfills/{backfillId}', backfillPath));
    for (let attempt = 0; attempt < 300 && (backfillState.status === 'QUEUED' || backfillState.status === 'RUNNING'); attempt++) {
      await sleep(100);
      backfillState = unwrap(await api.GET('/backfills/{backfillId}', backfillPath));
    }
    expect(backfillState).toMatchObject({ status: 'COMPLETED', rowsWritten: 1, rowsFailed: 1, studiesCreated: 1, incentivesWritten: 1 });
    expect(unwrap(await api.GET('/backfills')).results.map((backfill) => backfill.backfillId)).toEqual([backfillId]);
    expect(unwrap(await api.GET('/backfills/{backfillId}/errors', backfillPath)).results).toMatchObject([{ row: 3, column: 'status' }]);

    // Opting out, and the reference's Person routes (E15–E18).
    unwrap(await api.PUT('/people/{personIdOrEmail}/opted-out', { params: { path: { personIdOrEmail: 'mary@compiled.example.test' } }, body: { isOptedOut: true } }));
    expect(unwrap(await api.GET('/people/{personIdOrEmail}/opted-out', { params: { path: { personIdOrEmail: 'mary@compiled.example.test' } } }))).toMatchObject({ isOptedOut: true });
    unwrap(await api.GET('/person', { params: { query: { email: 'katherine@compiled.example.test' } } }));
    unwrap(await api.POST('/person', { body: { email: 'katherine@compiled.example.test', optedOut: false } }));

    // Segments.
    const segment = unwrap(await api.POST('/segments', { body: { name: 'Over 30', filter: { filters: [{ property: { propertyId: propertyIdOf('Age') }, comparison: 'GREATER_THAN', value: 30 }] } } }));
    const segmentPath = { params: { path: { segmentId: segment.segmentId } } };
    unwrap(await api.GET('/segments'));
    unwrap(await api.GET('/segments/{segmentId}', segmentPath));
    unwrap(await api.PATCH('/segments/{segmentId}', { ...segmentPath, body: { description: 'People over 30' } }));

    // A study: screener, plan, template, launch, pause, launch again.
    const study = unwrap(await api.POST('/studies', { body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Compiled interviews', participationLimit: 10, consentFormId: 'consent-v1' } } }));
    const studyPath = { params: { path: { studyId: study.studyId } } };
    unwrap(await api.PUT('/studies/{studyId}/screener', { ...studyPath, body: { questions: [{ name: 'How often do you shop online?', type: 'SHORT_FORM', isRequired: true }] } }));
    unwrap(await api.DELETE('/studies/{studyId}/screener', studyPath));
    unwrap(await api.PUT('/studies/{studyId}/screener', { ...studyPath, body: { questions: [{ name: 'Which device do you use?', type: 'SHORT_FORM', isRequired: false }] } }));
    unwrap(await api.PATCH('/studies/{studyId}', { ...studyPath, body: { studyPlan: { incentive: { amount: 50 }, language: 'en' } } }));
    const quotas = unwrap(await api.PUT('/studies/{studyId}/quota-groups', { ...studyPath, body: { quotaGroups: [{ name: 'Everyone', cap: 10 }] } }));
    expect(unwrap(await api.GET('/studies/{studyId}/quota-groups', studyPath)).quotaGroups).toEqual(quotas.quotaGroups);
    const template = unwrap(await api.POST('/study-templates', { body: { studyId: study.studyId, name: 'Interview template' } }));
    unwrap(await api.GET('/study-templates'));
    unwrap(await api.GET('/study-templates/{studyTemplateId}', { params: { path: { studyTemplateId: template.studyTemplateId } } }));
    unwrap(await api.POST('/studies/{studyId}/launch', studyPath));
    unwrap(await api.POST('/studies/{studyId}/status', { ...studyPath, body: { status: 'PAUSED' } }));
    unwrap(await api.POST('/studies/{studyId}/launch', studyPath));
    unwrap(await api.GET('/studies'));
    unwrap(await api.GET('/studies/{studyId}', studyPath));

    // Participants: added, invited, found by E1, their events.
    const added = unwrap(await api.POST('/studies/{studyId}/participants', { ...studyPath, body: { personIds: [ada.personId, grace.personId] } }));
    expect(added.errors).toEqual([]);
    const adaParticipant = added.results.find((participant) => participant.personId === ada.personId)!;
    const participantPath = { params: { path: { studyId: study.studyId, participantId: adaParticipant.participantId } } };
    unwrap(await api.PATCH('/studies/{studyId}/participants/{participantId}', { ...participantPath, body: { status: 'INVITED' } }));
    unwrap(await api.GET('/studies/{studyId}/participants/{participantId}', participantPath));
    const invited = unwrap(
      await api.POST('/studies/{studyId}/participants/search', {
        ...studyPath,
        body: { filter: { filters: [{ property: { propertyGroup: 'PARTICIPANT', propertyName: 'STATUS' }, comparison: 'IS_ANY_OF', value: ['INVITED'] }] } },
      }),
    );
    expect(invited.results.map((participant) => participant.participantId)).toEqual([adaParticipant.participantId]);
    unwrap(await api.GET('/participant-status-events', { params: { query: { studyId: study.studyId } } }));

    // Scheduling: the owner hosts every hour of every day, a time booked for Ida, moved, then canceled.
    const ida = unwrap(await api.POST('/people', { body: { email: 'ida@compiled.example.test', firstName: 'Ida' } }));
    const idaParticipant = unwrap(await api.POST('/studies/{studyId}/participants', { ...studyPath, body: { personIds: [ida.personId] } })).results[0]!;
    const allDay = [{ start: '00:00', end: '24:00' }];
    const schedule = unwrap(
      await api.PUT('/studies/{studyId}/schedule', {
        ...studyPath,
        body: { durationMinutes: 30, minimumNoticeMinutes: 60, hosts: [{ userId: me.userId, timeZone: 'Asia/Kathmandu', weeklyHours: { MONDAY: allDay, TUESDAY: allDay, WEDNESDAY: allDay, THURSDAY: allDay, FRIDAY: allDay, SATURDAY: allDay, SUNDAY: allDay }, overrides: [] }] },
      }),
    );
    expect(unwrap(await api.GET('/studies/{studyId}/schedule', studyPath))).toEqual(schedule);
    const open = unwrap(await api.GET('/studies/{studyId}/slots', { ...studyPath, params: { ...studyPath.params, query: { timeZone: 'America/New_York' } } })).slots;
    expect(open.length).toBeGreaterThan(2);
    const booking = unwrap(await api.POST('/studies/{studyId}/bookings', { ...studyPath, body: { participantId: idaParticipant.participantId, startTime: open[0]!.startTime, personTimeZone: 'Europe/Berlin' } }));
    const bookingPath = { params: { path: { studyId: study.studyId, bookingId: booking.bookingId } } };
    unwrap(await api.GET('/studies/{studyId}/bookings/{bookingId}', bookingPath));
    expect(unwrap(await api.POST('/studies/{studyId}/bookings/{bookingId}/move', { ...bookingPath, body: { startTime: open[2]!.startTime } })).sequence).toBe(1);
    expect(unwrap(await api.POST('/studies/{studyId}/bookings/{bookingId}/cancel', { ...bookingPath, body: { reason: 'Compiled walk' } })).status).toBe('CANCELED');
    expect(unwrap(await api.GET('/studies/{studyId}/bookings', studyPath)).total).toBe(1);

    // The participant's side: Grace's link to the screener, its page, and her answers sent as a browser sends a form.
    const graceParticipant = added.results.find((participant) => participant.personId === grace.personId)!;
    const link = unwrap(await api.POST('/studies/{studyId}/participants/{participantId}/links', { params: { path: { studyId: study.studyId, participantId: graceParticipant.participantId } }, body: { purpose: 'SCREENER' } }));
    const pageUrl = `${server.api.replace(/\/v1$/, '')}${new URL(link.url).pathname}`;
    const screenerPage = await fetch(pageUrl);
    expect(screenerPage.status).toBe(200);
    const html = await screenerPage.text();
    const formField = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)![1]!;
    const question = /name="(q_[^"]+)"/.exec(html)![1]!;
    const submitted = await fetch(pageUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
      body: new URLSearchParams({ formToken: formField('formToken'), startedAt: formField('startedAt'), [question]: 'A phone' }).toString(),
    });
    expect(submitted.status).toBe(200);
    expect(await submitted.text()).toContain("Thank you");
    expect(unwrap(await api.GET('/studies/{studyId}/participants/{participantId}', { params: { path: { studyId: study.studyId, participantId: graceParticipant.participantId } } })).screenerState).toBe('SUBMITTED');
    unwrap(await api.GET('/study-status-events', { params: { query: { studyId: study.studyId } } }));

    // Answers for the team: Grace's response, the study's responses, their CSV, the funnel.
    const graceAnswers = unwrap(await api.GET('/studies/{studyId}/participants/{participantId}/screener-response', { params: { path: { studyId: study.studyId, participantId: graceParticipant.participantId } } }));
    expect(graceAnswers.answers.map((answer) => answer.value)).toEqual(['A phone']);
    expect(unwrap(await api.GET('/studies/{studyId}/screener-responses', studyPath)).total).toBe(1);
    const exported = await api.GET('/studies/{studyId}/screener-responses/export', { ...studyPath, parseAs: 'text' });
    expect(exported.response.status).toBe(200);
    expect(exported.data).toContain('A phone');
    expect(unwrap(await api.GET('/studies/{studyId}/screener-funnel', studyPath))).toMatchObject({ opened: 1, started: 1, submitted: 1, needsReview: 1 });

    // Consent.
    const consent = unwrap(await api.POST('/consent-submissions', { body: { personId: ada.personId, studyId: study.studyId, formVersion: '1.0', source: 'PAPER' } }));
    unwrap(await api.GET('/consent-submissions', { params: { query: { personId: ada.personId } } }));
    unwrap(await api.GET('/consent-submissions/{consentSubmissionId}', { params: { path: { consentSubmissionId: consent.consentSubmissionId } } }));

    // Consent forms (markdown-it, loaded on first render): a form, its list, a second version, each version read.
    const consentForm = unwrap(
      await api.POST('/consent-forms', {
        body: {
          name: 'Interview consent',
          title: 'Consent to an interview',
          body: '# What happens\n\nWe talk for **45 minutes**. <script>alert(1)</script>',
          language: 'en',
          requiredStatements: [{ id: 'read', text: 'I have read this.' }],
          optionalChoices: [{ id: 'recording', text: 'I agree to be recorded.' }],
        },
      }),
    );
    expect(consentForm.currentVersion.bodyHtml).toBe('<h1>What happens</h1>\n<p>We talk for <strong>45 minutes</strong>. &lt;script&gt;alert(1)&lt;/script&gt;</p>\n');
    const consentFormPath = { params: { path: { consentFormId: consentForm.consentFormId } } };
    unwrap(await api.GET('/consent-forms'));
    unwrap(await api.GET('/consent-forms/{consentFormId}', consentFormPath));
    const secondVersion = unwrap(
      await api.POST('/consent-forms/{consentFormId}/versions', {
        ...consentFormPath,
        body: { title: 'Consent, revised', body: 'Shorter.', language: 'en', requiredStatements: [], optionalChoices: [] },
      }),
    );
    expect(secondVersion.version).toBe(2);
    unwrap(await api.GET('/consent-forms/{consentFormId}/versions/{version}', { params: { path: { consentFormId: consentForm.consentFormId, version: 1 } } }));

    // The participant's consent (pdfkit, loaded with the first signed copy): Grace signs the form through a CONSENT link,
    // the copy's job emails her the PDF with a withdrawal link, and she withdraws through it.
    unwrap(await api.PATCH('/studies/{studyId}', { ...studyPath, body: { studyPlan: { consentFormId: consentForm.consentFormId } } }));
    const consentLink = unwrap(await api.POST('/studies/{studyId}/participants/{participantId}/links', { params: { path: { studyId: study.studyId, participantId: graceParticipant.participantId } }, body: { purpose: 'CONSENT' } }));
    const consentUrl = `${server.api.replace(/\/v1$/, '')}${new URL(consentLink.url).pathname}`;
    const consentHtml = await (await fetch(consentUrl)).text();
    const consentField = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(consentHtml)![1]!;
    const signed = await fetch(`${consentUrl}/consent`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
      body: new URLSearchParams({ formToken: consentField('formToken'), version: consentField('version'), signedName: 'Grace Hopper' }).toString(),
    });
    expect(signed.status).toBe(200);
    const copyDeadline = Date.now() + 30_000;
    while (smtp.to('grace@compiled.example.test').length === 0 && Date.now() < copyDeadline) await sleep(100);
    const [copy] = smtp.to('grace@compiled.example.test');
    expect(copy!.parsed.attachments[0]!.content.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const withdrawalUrl = /https?:\/\/\S+\/p\/[A-Za-z0-9_-]{43}/.exec(copy!.parsed.text ?? '')![0];
    const withdrawalPage = `${server.api.replace(/\/v1$/, '')}${new URL(withdrawalUrl).pathname}`;
    const withdrawalHtml = await (await fetch(withdrawalPage)).text();
    const withdrawn = await fetch(`${withdrawalPage}/withdraw`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
      body: new URLSearchParams({ formToken: /name="formToken" value="([^"]*)"/.exec(withdrawalHtml)![1]! }).toString(),
    });
    expect(await withdrawn.text()).toContain('Your consent is withdrawn');

    // Branding configs: one with a logo (base64 in the JSON), listed, read, changed; its logo and accent stylesheet served by the pages' origin; deleted.
    const branding = unwrap(await api.POST('/branding-configs', { body: { displayName: 'Compiled Research', accentColor: '#0f6e3a', logo: { contentType: 'image/png', data: testImages.png }, logoAlt: 'Compiled' } }));
    const brandingPath = { params: { path: { brandingConfigId: branding.brandingConfigId } } };
    unwrap(await api.GET('/branding-configs'));
    unwrap(await api.GET('/branding-configs/{brandingConfigId}', brandingPath));
    const rebranded = unwrap(await api.PATCH('/branding-configs/{brandingConfigId}', { ...brandingPath, body: { logo: { contentType: 'image/webp', data: testImages.webp } } }));
    const served = await fetch(`${server.api.replace(/\/v1$/, '')}${rebranded.logo!.path}`);
    expect([served.status, served.headers.get('content-type'), served.headers.get('x-content-type-options')]).toEqual([200, 'image/webp', 'nosniff']);
    expect(Buffer.from(await served.arrayBuffer()).equals(Buffer.from(testImages.webp, 'base64'))).toBe(true);
    unwrap(await api.DELETE('/branding-configs/{brandingConfigId}', brandingPath));

    // Calendar feeds: one made (its URL once), listed, fetched by a calendar application (ical-generator), revoked, then a 404.
    const calendarFeed = unwrap(await api.POST('/calendar-feeds'));
    expect(unwrap(await api.GET('/calendar-feeds')).calendarFeeds.map((feed) => feed.feedId)).toEqual([calendarFeed.feedId]);
    const feedUrl = `${server.api.replace(/\/v1$/, '')}${new URL(calendarFeed.url).pathname}`;
    const subscribed = await fetch(feedUrl);
    expect([subscribed.status, subscribed.headers.get('content-type')]).toEqual([200, 'text/calendar; charset=utf-8']);
    expect(await subscribed.text()).toMatch(/^BEGIN:VCALENDAR\r\n[\s\S]*METHOD:PUBLISH\r\n/);
    unwrap(await api.DELETE('/calendar-feeds/{feedId}', { params: { path: { feedId: calendarFeed.feedId } } }));
    expect((await fetch(feedUrl)).status).toBe(404);

    // Message templates (LiquidJS, loaded on first parse), a preview, a send through SMTP (nodemailer), its unsubscribe link.
    const messageTemplate = unwrap(
      await api.POST('/message-templates', {
        body: { name: 'Invitation', subject: 'Hello {{ person.firstName }}', textBody: 'Hi {{ person.firstName }}, join {{ study.externalName | default: "our study" }}: {{ links.unsubscribe }}' },
      }),
    );
    const messageTemplatePath = { params: { path: { templateId: messageTemplate.templateId } } };
    unwrap(await api.GET('/message-templates'));
    unwrap(await api.GET('/message-templates/{templateId}', messageTemplatePath));
    unwrap(await api.PATCH('/message-templates/{templateId}', { ...messageTemplatePath, body: { htmlBody: '<p>Hi {{ person.firstName }}</p>' } }));
    const preview = unwrap(await api.POST('/message-templates/{templateId}/preview', { ...messageTemplatePath, body: { personId: ada.personId, studyId: study.studyId } }));
    expect(preview.subject).toBe('Hello Ada');
    const sent = unwrap(await api.POST('/studies/{studyId}/messages', { ...studyPath, body: { templateId: messageTemplate.templateId, participantIds: [adaParticipant.participantId] } }));
    expect(sent).toMatchObject({ queued: 1 });
    const deadline = Date.now() + 30_000;
    while (smtp.to('ada@compiled.example.test').length === 0 && Date.now() < deadline) await sleep(100);
    const [mail] = smtp.to('ada@compiled.example.test');
    expect(mail?.parsed.subject).toBe('Hello Ada');
    const messages = unwrap(await api.GET('/messages', { params: { query: { personId: ada.personId } } }));
    unwrap(await api.GET('/messages/{messageId}', { params: { path: { messageId: messages.results[0]!.messageId } } }));
    const unsubscribeToken = new URL(unsubscribeLinkOf(mail!)).pathname.split('/').pop()!;
    await visitor.GET('/unsubscribe/{token}', { params: { path: { token: unsubscribeToken } }, parseAs: 'text' });
    await visitor.POST('/unsubscribe/{token}', { params: { path: { token: unsubscribeToken } }, body: { 'List-Unsubscribe': 'One-Click' }, parseAs: 'text' });
    unwrap(await api.DELETE('/message-templates/{templateId}', messageTemplatePath));

    // The workspace's incentive provider: the default read, the sandbox named (it takes no credentials), then the default again.
    expect(unwrap(await api.GET('/incentive-provider'))).toMatchObject({ provider: 'sandbox', source: 'CONFIGURATION' });
    expect(unwrap(await api.PUT('/incentive-provider', { body: { provider: 'sandbox' } }))).toMatchObject({ provider: 'sandbox', source: 'WORKSPACE', credentialsSet: [] });
    expect(unwrap(await api.DELETE('/incentive-provider'))).toMatchObject({ source: 'CONFIGURATION' });

    // A team signs in: an invitation sent, sent again and accepted with a password; another revoked; a
    // link asked for and redeemed; the password signed in with and changed; sign-out, and everywhere.
    const linkIn = async (address: string, count: number, page: string) => {
      const deadline = Date.now() + 30_000;
      const links = () => smtp.to(address).filter((mail) => (mail.parsed.text ?? '').includes('/console/'));
      while (links().length < count && Date.now() < deadline) await sleep(100);
      const text = links()[count - 1]?.parsed.text ?? '';
      const token = new RegExp(`/console/${page}#([A-Za-z0-9_-]{43})`).exec(text)?.[1];
      expect(token, text).toBeDefined();
      return token!;
    };
    const cookieOf = (response: Response) => (response.headers.get('set-cookie') ?? '').split(';')[0]!;
    const invitee = 'invited.member@compiled.example.test';
    const invitation = unwrap(await api.POST('/users/invitations', { body: { email: invitee, role: 'RESEARCHER' } }));
    await linkIn(invitee, 1, 'invitation');
    unwrap(await api.POST('/users/{userId}/invitation', { params: { path: { userId: invitation.userId } } }));
    const accepted = await visitor.POST('/session/invitation', { body: { token: await linkIn(invitee, 2, 'invitation'), password: 'a long compiled password' } });
    const acceptedCookie = cookieOf(accepted.response);
    const { csrfToken } = unwrap(await visitor.GET('/session', { headers: { cookie: acceptedCookie } }));
    unwrap(await visitor.PUT('/session/password', { headers: { cookie: acceptedCookie, 'x-csrf-token': csrfToken }, body: { currentPassword: 'a long compiled password', newPassword: 'another compiled password' } }));
    const revokedInvitation = unwrap(await api.POST('/users/invitations', { body: { email: 'joan@compiled.example.test', role: 'OBSERVER' } }));
    unwrap(await api.DELETE('/users/{userId}/invitation', { params: { path: { userId: revokedInvitation.userId } } }));
    unwrap(await visitor.POST('/session/link', { body: { workspace: me.workspaceSlug, email: invitee } }));
    const byLink = await visitor.POST('/session/link/redeem', { body: { token: await linkIn(invitee, 3, 'sign-in/link') } });
    const linkSession = unwrap(byLink);
    const byPassword = await visitor.POST('/session/password', { body: { workspace: me.workspaceSlug, email: invitee, password: 'another compiled password' } });
    const passwordSession = unwrap(byPassword);
    unwrap(await visitor.DELETE('/session', { headers: { cookie: cookieOf(byPassword.response), 'x-csrf-token': passwordSession.csrfToken } }));
    expect(unwrap(await visitor.POST('/session/sign-out-everywhere', { headers: { cookie: cookieOf(byLink.response), 'x-csrf-token': linkSession.csrfToken } }))).toEqual({ sessionsEnded: 2 });

    // Single sign-on through a real OpenID Connect provider (openid-client, loaded on the first sign-in):
    // the settings set and read, a browser's way there and back, a member by just-in-time membership, the settings removed.
    unwrap(await api.PUT('/sso-settings', { body: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, jitDomains: ['sso.compiled.example.test'] } }));
    expect(unwrap(await api.GET('/sso-settings'))).toMatchObject({ clientSecretSet: true, redirectUri: `${serverEnv.PUBLIC_URL}/v1/session/oidc/callback` });
    const browserStep = async (url: string, cookie = '') => {
      const response = await fetch(url, { redirect: 'manual', headers: { cookie } });
      const { pathname } = new URL(url);
      const operation = pathname.endsWith('/start') ? 'GET /session/oidc/start' : 'GET /session/oidc/callback';
      answered.set(operation, [...(answered.get(operation) ?? []), response.status]);
      return response;
    };
    const started = await browserStep(`${server.api}/session/oidc/start?workspace=${me.workspaceSlug}`);
    expect(started.status).toBe(303);
    const callback = await signInAtProvider(started.headers.get('location')!, 'ada@sso.compiled.example.test', `${serverEnv.PUBLIC_URL}/v1/session/oidc/callback`);
    const back = await browserStep(callback.href, cookieOf(started));
    expect([back.status, back.headers.get('location')]).toEqual([303, '/console/?sso=signed-in']);
    const ssoSession = back.headers.getSetCookie().find((line) => line.startsWith('recruit_session='))!.split(';')[0]!;
    expect(unwrap(await visitor.GET('/session', { headers: { cookie: ssoSession } }))).toMatchObject({ method: 'OIDC' });
    expect(unwrap(await api.GET('/audit-events', { params: { query: { operationId: 'finishSsoSignIn' } } })).results).toEqual([
      expect.objectContaining({ requestId: back.headers.get('x-request-id'), actor: expect.objectContaining({ kind: 'USER' }) }),
    ]);
    unwrap(await api.DELETE('/sso-settings'));

    // Incentives: on a draft study (resend and cancel need one, the reference's rule), searched.
    const pilot = unwrap(await api.POST('/studies', { body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Compiled pilot' } } }));
    const pilotParticipants = unwrap(await api.POST('/studies/{studyId}/participants', { params: { path: { studyId: pilot.studyId } }, body: { personIds: [grace.personId] } }));
    const incentive = unwrap(await api.POST('/incentives', { body: { participantId: pilotParticipants.results[0]!.participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: 2500 } }));
    const incentivePath = { params: { path: { incentiveId: incentive.incentiveId } } };
    unwrap(await api.GET('/incentives/{incentiveId}', incentivePath));
    unwrap(await api.POST('/incentives/{incentiveId}/resend', incentivePath));
    unwrap(await api.POST('/incentives/{incentiveId}/cancel', incentivePath));
    unwrap(await api.POST('/incentives/search', { body: { studyId: pilot.studyId } }));

    // Money: a budget, an approval threshold, one incentive approved by a second person and one refused, the ledger.
    const walkBudget = unwrap(await api.POST('/incentive-budgets', { body: { name: 'Compiled', currency: 'EUR', limitCents: 100_000 } }));
    const budgetPath = { params: { path: { budgetId: walkBudget.budgetId } } };
    unwrap(await api.GET('/incentive-budgets', {}));
    unwrap(await api.GET('/incentive-budgets/{budgetId}', budgetPath));
    unwrap(await api.PATCH('/incentive-budgets/{budgetId}', { ...budgetPath, body: { limitCents: 200_000 } }));
    unwrap(await api.PUT('/incentive-approval-settings', { body: { thresholds: [{ currency: 'EUR', amountCents: 1000 }] } }));
    unwrap(await api.GET('/incentive-approval-settings', {}));
    const waitingBody = { participantId: pilotParticipants.results[0]!.participantId, type: 'MONEY_OR_GIFT_CARD' as const, amountCents: 5000, budgetId: walkBudget.budgetId };
    const approved = unwrap(await api.POST('/incentives', { body: waitingBody }));
    const refused = unwrap(await api.POST('/incentives', { body: waitingBody }));
    unwrap(await api.GET('/incentive-approvals', {}));
    const approverApi = clientFor(approverToken);
    unwrap(await approverApi.POST('/incentives/{incentiveId}/approve', { params: { path: { incentiveId: approved.incentiveId } } }));
    unwrap(await approverApi.POST('/incentives/{incentiveId}/refuse', { params: { path: { incentiveId: refused.incentiveId } }, body: { reason: 'Over the study plan' } }));
    unwrap(await api.GET('/incentives/{incentiveId}/ledger', { params: { path: { incentiveId: approved.incentiveId } } }));
    unwrap(await api.GET('/incentive-ledger', {}));
    unwrap(await api.POST('/incentive-budgets/{budgetId}/archive', budgetPath));

    // A public signup form and its submission.
    const form = unwrap(await api.POST('/signups', { body: { name: 'Join the panel', populationId } }));
    const formPath = { params: { path: { signupFormId: form.signupFormId } } };
    unwrap(await api.GET('/signups'));
    unwrap(await api.GET('/signups/{signupFormId}', formPath));
    const submission = unwrap(await visitor.POST('/public/signups/{signupFormId}/submissions', { ...formPath, body: { email: 'dorothy@compiled.example.test', firstName: 'Dorothy' } }));
    const submissionPath = { params: { path: { signupFormId: form.signupFormId, submissionId: submission.submissionId } } };
    unwrap(await api.GET('/signups/{signupFormId}/submissions/{submissionId}', submissionPath));
    unwrap(await api.PATCH('/signups/{signupFormId}/submissions/{submissionId}', { ...submissionPath, body: { approvalStatus: 'APPROVED' } }));
    unwrap(await api.POST('/signups/{signupFormId}/submissions/search', { ...formPath, body: {} }));

    // Deletions: a segment, people three ways.
    unwrap(await api.DELETE('/segments/{segmentId}', segmentPath));
    unwrap(await api.DELETE('/people/{personId}', { params: { path: { personId: grace.personId } } }));
    unwrap(await api.POST('/people/delete', { body: { emails: ['mary@compiled.example.test'] } }));
    unwrap(await api.POST('/person/delete', { body: { emails: ['dorothy@compiled.example.test'] } }));

    // Webhooks: what was pushed, each delivery signed; a resend, a replay, a rotated secret, and the endpoint removed.
    await expect.poll(async () => unwrap(await api.GET('/webhook-messages')).results.length, { timeout: 30_000 }).toBeGreaterThan(5);
    const pushed = unwrap(await api.GET('/webhook-messages'));
    const message = pushed.results[0]!;
    unwrap(await api.GET('/webhook-messages/{messageId}', { params: { path: { messageId: message.messageId } } }));
    await expect.poll(async () => unwrap(await api.GET('/webhook-endpoints/{endpointId}/attempts', endpointPath)).results.length, { timeout: 30_000 }).toBeGreaterThan(1);
    unwrap(await api.POST('/webhook-endpoints/{endpointId}/messages/{messageId}/resend', { params: { path: { endpointId: endpoint.endpointId, messageId: message.messageId } } }));
    unwrap(await api.POST('/webhook-endpoints/{endpointId}/replay', { ...endpointPath, body: { since: new Date(Date.now() - 3_600_000).toISOString() } }));
    await hooks.waitFor(4, 30_000);
    for (const delivery of hooks.received) expect(() => verifyWebhook(endpoint.secret, delivery.headers as Record<string, string>, delivery.body)).not.toThrow();
    unwrap(await api.POST('/webhook-endpoints/{endpointId}/rotate-secret', endpointPath));

    // The audit trail: its retention set and read, then every write of the walk found in it exactly once, naming its actor.
    expect(unwrap(await api.PUT('/audit-settings', { body: { retentionDays: 400 } }))).toMatchObject({ retentionDays: 400 });
    expect(unwrap(await api.GET('/audit-settings'))).toMatchObject({ retentionDays: 400 });
    const trail: { requestId: string | null; operationId: string; actor: { kind: string; userId: string | null } }[] = [];
    for (let cursor: string | undefined; ; ) {
      const page = unwrap(await api.GET('/audit-events', { params: { query: { size: 100, ...(cursor ? { startCursor: cursor } : {}) } } }));
      trail.push(...page.results);
      if (!page.pageInfo.hasNextPage) break;
      cursor = page.pageInfo.endCursor;
    }
    const reading = /^(search|preview)[A-Z]/;
    const operationIdOf = new Map(operationsOf(document).map(({ method, path: operationPath, operation }) => [`${method} ${operationPath}`, (operation as { operationId?: string }).operationId ?? '']));
    const misrecorded = writes
      .map((write) => ({ ...write, operationId: operationIdOf.get(write.operation)!, entries: trail.filter((entry) => entry.requestId === write.requestId) }))
      .filter(({ operation, operationId, withToken, entries }) => {
        if (reading.test(operationId)) return entries.length !== 0;
        const [entry] = entries;
        // A token's write is its user's; the console's session routes name the user signing in or out (a link asked for: a visitor); a public page's, the participant.
        const expected = withToken || (operation.includes(' /session') && operationId !== 'requestSignInLink') ? 'USER' : operationId === 'requestSignInLink' ? 'VISITOR' : 'PARTICIPANT';
        return entries.length !== 1 || entry!.operationId !== operationId || entry!.actor.kind !== expected || (expected === 'USER' && entry!.actor.userId === null);
      })
      .map(({ operation, entries }) => `${operation}: ${JSON.stringify(entries)}`);
    expect(misrecorded).toEqual([]);
    // The endpoint removed last (its deliveries stop with it), and that write's one entry.
    unwrap(await api.DELETE('/webhook-endpoints/{endpointId}', endpointPath));
    const removal = writes.at(-1)!;
    const removed = unwrap(await api.GET('/audit-events', { params: { query: { operationId: 'deleteWebhookEndpoint' } } })).results;
    expect(removed.map((entry) => [entry.requestId, entry.actor.kind])).toEqual([[removal.requestId, 'USER']]);
    // Every write operation of the document was made at least once above.
    const writeOperations = operationsOf(document).filter(({ method }) => method !== 'GET').map(({ method, path: operationPath }) => `${method} ${operationPath}`);
    expect(writeOperations.filter((operation) => !writes.some((write) => write.operation === operation))).toEqual([]);

    const missed = operationsOf(document)
      .map(({ method, path: operationPath, operation }) => ({ name: `${method} ${operationPath}`, success: Number(successOf(operation.responses)) }))
      .filter(({ name, success }) => !(answered.get(name) ?? []).includes(success))
      .map(({ name, success }) => `${name}: expected ${success}, answered ${JSON.stringify(answered.get(name) ?? [])}`);
    expect(missed, server.output()).toEqual([]);
    expect(server.output()).not.toMatch(/"level":(50|60)/);
  }, 180_000);

  it('refuses a webhook endpoint on a private address when private targets are not allowed (ipaddr.js, loaded on first check)', async () => {
    // The same data, served again after a restart with the default target policy.
    expect(await server.stop(), server.output().slice(-3000)).toBe(0);
    server = await startCompiledServer({ ...serverEnv, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'off' }, { coverageDir, port: server.port });
    const api = clientFor(token);
    const refused = await api.POST('/webhook-endpoints', { body: { url: 'http://10.0.0.7/hooks' } });
    expect(refused.response.status).toBe(400);
    expect(refused.error).toEqual({ errors: [{ message: expect.stringMatching(/private address/), path: ['url'] }] });
  }, 120_000);

  it('loaded every file of the bundle in the walk: no chunk of dist/ is left for a user to meet first', async () => {
    expect(await server.stop(), server.output().slice(-3000)).toBe(0);
    const loaded = loadedScripts(coverageDir);
    const neverLoaded = bundleFiles().filter((file) => !loaded.has(file));
    expect(neverLoaded.map((file) => path.relative(process.cwd(), file))).toEqual([]);
  }, 60_000);
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../test/harness.js';
import { createPerson } from '../../test/people-factory.js';
import { addParticipants, createStudy } from '../../test/participants-factory.js';
import { type ReceivedMail, type SmtpReceiver, smtpConfig, startSmtpReceiver } from '../../test/smtp-receiver.js';
import { demoteHeadings } from './consent-page.js';
import { cleanSignedName } from './consent-routes.js';

/**
 * The participant's side of consent (issue 33, item 5) through HTTP: the consent step after the
 * screener (or first), signing, the signed copy emailed through real SMTP with its PDF and
 * withdrawal link, the withdrawal, and every refusal (forged, altered, expired, reused and
 * wrong-purpose tokens, missing or altered form tokens, cross-site posts, rate limits).
 */

let receiver: SmtpReceiver;
let service: TestService;
beforeAll(async () => {
  receiver = await startSmtpReceiver();
  service = await startTestService(smtpConfig(receiver));
});
afterAll(async () => {
  await service?.stop();
  await receiver?.close();
});

const consentForm = {
  name: 'Interview consent',
  title: 'Consent to take part in a research interview',
  body: '# About the study\n\nWe talk for **45 minutes** about how you pay online.\n\n- You can stop at any time.',
  language: 'en',
  requiredStatements: [
    { id: 'read', text: 'I have read and understood this information.' },
    { id: 'voluntary', text: 'I take part voluntarily and may withdraw at any time.' },
  ],
  optionalChoices: [
    { id: 'recording', text: 'I agree to be video-recorded.' },
    { id: 'quotes', text: 'I agree to be quoted anonymously.' },
  ],
};

type Purpose = 'SCREENER' | 'CONSENT' | 'WITHDRAWAL';

async function issueLink(tenant: Tenant, studyId: string, participantId: string, purpose: Purpose) {
  const response = await call(service, 'POST', `/studies/${studyId}/participants/${participantId}/links`, { token: tenant.token, body: { purpose } });
  expect(response.statusCode, response.body).toBe(201);
  const link = response.json<{ linkId: string; url: string }>();
  return { linkId: link.linkId, path: new URL(link.url).pathname };
}

/** A launched study with a one-question screener (left for review) and a consent form, one participant and a link of theirs. */
async function consentWorld(tenant: Tenant, options: { purpose?: Purpose; studyPlan?: Record<string, unknown>; screener?: boolean; form?: object; studyType?: 'INTERVIEWS' | 'SURVEY' } = {}) {
  const created = await call(service, 'POST', '/consent-forms', { token: tenant.token, body: { ...consentForm, ...options.form } });
  expect(created.statusCode, created.body).toBe(201);
  const form = created.json<{ consentFormId: string; currentVersion: { contentSha256: string; version: number } }>();
  const studyId = await createStudy(service, tenant, {
    studyType: options.studyType ?? 'INTERVIEWS',
    screener: options.screener ?? true,
    launch: true,
    studyPlan: { externalName: 'Checkout interviews', consentFormId: form.consentFormId, ...options.studyPlan },
  });
  const person = await createPerson(service, tenant, { firstName: 'Ottoline', lastName: 'Featherstone' });
  const [participant] = await addParticipants(service, tenant, studyId, [person.personId]);
  const link = await issueLink(tenant, studyId, participant!.participantId, options.purpose ?? 'SCREENER');
  return { studyId, person, participantId: participant!.participantId, form, ...link };
}

const get = (path: string, headers: Record<string, string> = {}) => service.app.inject({ method: 'GET', url: path, headers });
function post(path: string, fields: [string, string][], headers: Record<string, string> = {}) {
  return service.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin', ...headers }, payload: new URLSearchParams(fields).toString() });
}
const field = (body: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(body)?.[1];

/** Answers the world's screener (its one question): the page sends the person on. */
async function answerScreener(path: string) {
  const page = await get(path);
  expect(page.statusCode, page.body).toBe(200);
  const question = /name="(q_[^"]+)"/.exec(page.body)![1]!;
  return post(path, [['formToken', field(page.body, 'formToken')!], ['startedAt', field(page.body, 'startedAt')!], [question, 'Weekly']]);
}

/** The consent page's form fields, ready to sign with everything required ticked. */
async function signingFields(consentPath: string, extra: [string, string][] = [['signedName', '  Ottoline   Featherstone ']]) {
  const page = await get(consentPath);
  expect(page.statusCode, page.body).toBe(200);
  return [['formToken', field(page.body, 'formToken')!], ['version', field(page.body, 'version')!], ['statement', 'read'], ['statement', 'voluntary'], ...extra] as [string, string][];
}

const consentRows = (personId: string) => service.deps.db.selectFrom('consent_submissions').selectAll().where('person_id', '=', personId).orderBy('consent_submission_id').execute();
const participantRow = (participantId: string) => service.deps.db.selectFrom('participants').selectAll().where('participant_id', '=', participantId).executeTakeFirstOrThrow();
const webhookTypes = async (tenant: Tenant) => (await service.deps.db.selectFrom('webhook_messages').select('event_type').where('workspace_id', '=', tenant.workspaceId).orderBy('message_id').execute()).map((row) => row.event_type);
const runJobs = (tenant: Tenant) => service.jobs.runDue({ workspaceId: tenant.workspaceId });
const copiesTo = (email: string) => receiver.to(email).filter((mail) => mail.parsed.attachments.some((attachment) => attachment.contentType === 'application/pdf'));

function withdrawalPathOf(mail: ReceivedMail): string {
  const url = /https:\/\/recruit\.example\.test\/p\/[A-Za-z0-9_-]{43}/.exec(mail.parsed.text ?? '')?.[0];
  expect(url, mail.parsed.text).toBeDefined();
  return new URL(url!).pathname;
}

describe('the consent step after the screener', () => {
  it('follows an answer left for review (303), shows the current version, records the signature in one transaction, thanks, and says "already signed" after', async () => {
    const tenant = await createTenant(service);
    const world = await consentWorld(tenant);
    const answered = await answerScreener(world.path);
    expect(answered.statusCode, answered.body).toBe(303);
    expect(answered.headers.location).toBe(`${world.path}/consent`);
    expect(answered.headers['cache-control']).toBe('no-store');

    const page = await get(`${world.path}/consent`);
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page.body).toContain('<title>Consent to take part in a research interview – Test workspace</title>');
    expect(page.body).toContain('<h1>Consent to take part in a research interview</h1>');
    // The body's own heading is one level down: the title is the page's one h1.
    expect(page.body).toContain('<h2>About the study</h2>');
    expect(page.body).toContain('<strong>45 minutes</strong>');
    expect(page.body).toMatch(/<input type="checkbox" id="statement-0" name="statement" value="read" required[^>]*\/?><label for="statement-0">I have read and understood this information.<\/label>/);
    expect(page.body).toMatch(/<input type="checkbox" id="choice-0" name="choice" value="recording"[^>]*\/?><label for="choice-0">I agree to be video-recorded.<\/label>/);
    expect(page.body).toContain('<label for="signed-name">Your full name</label>');
    expect(page.body).toContain(`<form method="post" action="${world.path}/consent"`);

    const signed = await post(`${world.path}/consent`, await signingFields(`${world.path}/consent`, [['signedName', '  Ottoline   Featherstone '], ['choice', 'recording'], ['choice', 'unknown']]));
    expect(signed.statusCode, signed.body).toBe(200);
    expect(signed.body).toContain('Thank you for signing');
    expect(signed.body).toContain('Your consent to Checkout interviews is recorded.');

    const [row, ...more] = await consentRows(world.person.personId);
    expect(more).toEqual([]);
    expect(row).toMatchObject({
      study_id: world.studyId,
      consent_form_id: world.form.consentFormId,
      form_version: '1',
      text_sha256: world.form.currentVersion.contentSha256,
      source: 'PARTICIPANT_PAGE',
      signed_name: 'Ottoline Featherstone',
      choices: { recording: true, quotes: false },
      link_id: world.linkId,
      recorded_by_user_id: null,
      withdrawn_at: null,
      copy_sent_at: null,
    });
    expect((await participantRow(world.participantId)).consent_submitted_at).not.toBeNull();
    expect(await webhookTypes(tenant)).toContain('consent.submitted');
    const jobs = await service.deps.db.selectFrom('jobs').select(['queue', 'singleton_key']).where('workspace_id', '=', tenant.workspaceId).where('queue', '=', 'consent.copy').execute();
    expect(jobs).toEqual([{ queue: 'consent.copy', singleton_key: row!.consent_submission_id }]);

    // Again, by the screener's link or the consent step: signed already, no form.
    for (const path of [`${world.path}/consent`, world.path]) {
      const again = await get(path);
      expect(again.statusCode, path).toBe(200);
      expect(again.body, path).toMatch(/You have already (signed|answered)/);
      expect(again.body, path).not.toContain('<form');
    }
    const resent = await post(`${world.path}/consent`, await signingFields(`${world.path}/consent`).catch(() => [['formToken', 'x']] as [string, string][]));
    expect(resent.statusCode).toBeGreaterThanOrEqual(200);
    expect(await consentRows(world.person.personId)).toHaveLength(1);
  });

  it('reads back through the API with the choices, and the typed name masked for a token without the personal-data right', async () => {
    const tenant = await createTenant(service);
    const world = await consentWorld(tenant, { purpose: 'CONSENT' });
    expect((await post(`${world.path}/consent`, await signingFields(world.path))).statusCode).toBe(200);
    const [row] = await consentRows(world.person.personId);
    const full = await call(service, 'GET', `/consent-submissions/${row!.consent_submission_id}`, { token: tenant.token });
    expect(full.json()).toMatchObject({ source: 'PARTICIPANT_PAGE', signedName: 'Ottoline Featherstone', choices: { recording: false, quotes: false }, withdrawnAt: null, formVersion: '1' });
    const blind = (await tenant.tokenFor('SUPER_ADMIN', { canReadPersonalData: false })).token;
    const masked = await call(service, 'GET', `/consent-submissions/${row!.consent_submission_id}`, { token: blind });
    expect(masked.json()).toMatchObject({ signedName: '***', choices: { recording: false, quotes: false } });
    const listed = await call(service, 'GET', '/consent-submissions', { token: blind, query: { personId: world.person.personId } });
    expect(JSON.stringify(listed.json())).not.toContain('Featherstone');
    // The API records no PARTICIPANT_PAGE consent: that source is the page's.
    const forged = await call(service, 'POST', '/consent-submissions', { token: tenant.token, body: { personId: world.person.personId, studyId: world.studyId, source: 'PARTICIPANT_PAGE' } });
    expect(forged.statusCode).toBe(400);
    expect(JSON.stringify(forged.json())).toContain('source');
  });

  it('does not follow a disqualification, and a screener link reaches the consent step only after its questions', async () => {
    const tenant = await createTenant(service);
    const early = await consentWorld(tenant);
    const tooEarly = await get(`${early.path}/consent`);
    expect(tooEarly.statusCode).toBe(303);
    expect(tooEarly.headers.location).toBe(early.path);
    const disqualified = await consentWorld(tenant);
    await service.deps.db.updateTable('participants').set({ screener_state: 'DISQUALIFIED', screener_submitted_at: new Date().toISOString() }).where('participant_id', '=', disqualified.participantId).execute();
    const page = await get(`${disqualified.path}/consent`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('not the right fit this time');
    expect(page.body).not.toContain('<form');
    expect((await get(disqualified.path)).body).toContain('You have already answered');
  });

  it('a study with no questions goes straight to consent; one with no consent form the page can show says there is nothing to sign', async () => {
    const tenant = await createTenant(service);
    const noQuestions = await consentWorld(tenant, { screener: false });
    const first = await get(noQuestions.path);
    expect(first.statusCode).toBe(303);
    expect(first.headers.location).toBe(`${noQuestions.path}/consent`);
    const elsewhere = await consentWorld(tenant, { purpose: 'CONSENT', studyPlan: { consentFormId: 'kept-on-paper' } });
    const page = await get(elsewhere.path);
    expect(page.body).toContain('There is nothing to sign');
    expect(page.body).not.toContain('<form');
  });
});

describe('consent first', () => {
  it('with studyPlan.consentBeforeScreener, the screener link opens the consent step, then the questions, then thanks', async () => {
    const tenant = await createTenant(service);
    const world = await consentWorld(tenant, { studyPlan: { consentBeforeScreener: true } });
    const study = await call(service, 'GET', `/studies/${world.studyId}`, { token: tenant.token });
    expect(study.json<{ studyPlan: Record<string, unknown> }>().studyPlan.consentBeforeScreener).toBe(true);
    const opened = await get(world.path);
    expect(opened.statusCode).toBe(303);
    expect(opened.headers.location).toBe(`${world.path}/consent`);
    const signed = await post(`${world.path}/consent`, await signingFields(`${world.path}/consent`));
    expect(signed.statusCode, signed.body).toBe(303);
    expect(signed.headers.location).toBe(world.path);
    const answered = await answerScreener(world.path);
    expect(answered.statusCode, answered.body).toBe(200);
    expect(answered.body).toContain('Your answers for Checkout interviews have been sent');
    expect((await participantRow(world.participantId)).screener_state).toBe('SUBMITTED');
  });

  it('refuses a consentBeforeScreener that is not a boolean, naming it', async () => {
    const tenant = await createTenant(service);
    const response = await call(service, 'POST', '/studies', { token: tenant.token, body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'X', consentBeforeScreener: 'yes' } } });
    expect(response.statusCode).toBe(400);
    expect(JSON.stringify(response.json())).toContain('consentBeforeScreener');
  });
});

describe('a CONSENT link, a new version, the errors', () => {
  it('a CONSENT link opens the form at its own address; a newer version asks again at the next visit', async () => {
    const tenant = await createTenant(service);
    const world = await consentWorld(tenant, { purpose: 'CONSENT' });
    const page = await get(world.path);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`<form method="post" action="${world.path}/consent"`);
    expect(page.body).toContain('Version 1');
    const oldFields = await signingFields(world.path);
    expect((await post(`${world.path}/consent`, oldFields)).statusCode).toBe(200);
    expect((await get(world.path)).body).toContain('You have already signed');

    const published = await call(service, 'POST', `/consent-forms/${world.form.consentFormId}/versions`, { token: tenant.token, body: { ...consentForm, name: undefined, title: 'Consent, second edition' } });
    expect(published.statusCode, published.body).toBe(201);
    const again = await get(world.path);
    expect(again.body).toContain('<h1>Consent, second edition</h1>');
    expect(again.body).toContain('Version 2');
    // A form served for version 1 and posted now: the person reads version 2 first; nothing is recorded.
    const stale = await post(`${world.path}/consent`, oldFields);
    expect(stale.statusCode).toBe(409);
    expect(stale.body).toContain('The form was updated while you were reading it');
    expect(stale.body).toContain('<h1>Consent, second edition</h1>');
    expect(await consentRows(world.person.personId)).toHaveLength(1);
    expect((await post(`${world.path}/consent`, await signingFields(world.path))).statusCode).toBe(200);
    const rows = await consentRows(world.person.personId);
    expect(rows.map((row) => row.form_version)).toEqual(['1', '2']);
  });

  it('sends the form back with each error beside its field and linked from a summary, keeping what was ticked and typed; nothing is written', async () => {
    const tenant = await createTenant(service);
    const world = await consentWorld(tenant, { purpose: 'CONSENT', studyPlan: { language: 'de' } });
    const page = await get(world.path);
    const token = field(page.body, 'formToken')!;
    const cases: [string, [string, string][], string[], RegExp][] = [
      ['nothing', [], ['statement-0', 'statement-1', 'signed-name'], /Kreuzen Sie dieses Kästchen an/],
      ['one statement, no name', [['statement', 'voluntary'], ['choice', 'quotes'], ['signedName', ' \u0000 ']], ['statement-0', 'signed-name'], /Tippen Sie zur Unterschrift Ihren vollständigen Namen/],
      ['a name too long', [['statement', 'read'], ['statement', 'voluntary'], ['signedName', 'N'.repeat(201)]], ['signed-name'], /höchstens 200 Zeichen/],
    ];
    for (const [name, fields, targets, message] of cases) {
      const sent = await post(`${world.path}/consent`, [['formToken', token], ['version', '1'], ...fields]);
      expect(sent.statusCode, name).toBe(400);
      expect(sent.body, name).toContain('<html lang="de" dir="ltr">');
      expect(sent.body, name).toMatch(message);
      expect(sent.body, name).toContain('<div class="error-summary" role="alert"');
      const linked = [...sent.body.matchAll(/<li><a href="#([^"]+)">/g)].map((match) => match[1]);
      expect(linked, name).toEqual(targets);
      for (const target of targets) expect(sent.body, name).toMatch(new RegExp(`id="${target}"[^>]*aria-invalid="true"|aria-invalid="true"[^>]*id="${target}"`));
      if (name === 'one statement, no name') {
        expect(sent.body).toMatch(/value="voluntary" checked/);
        expect(sent.body).toMatch(/value="quotes" checked/);
        expect(sent.body).not.toMatch(/value="read" checked/);
      }
    }
    expect(await consentRows(world.person.personId)).toEqual([]);
    expect((await participantRow(world.participantId)).consent_submitted_at).toBeNull();
  });

  it('cleans the typed name: control characters, runs of space, composed form', () => {
    expect(cleanSignedName('  Ana\u0000  María\t\nLópez ')).toBe('Ana María López');
    expect(cleanSignedName('Zoe\u0308')).toBe('Zoë');
    expect(cleanSignedName('\u200b\u202e')).toBe('');
    expect(demoteHeadings('<h1>A</h1><h6>B</h6><p>&lt;h1&gt;</p>')).toBe('<h2>A</h2><h3>B</h3><p>&lt;h1&gt;</p>');
    expect(demoteHeadings('<h2>A</h2>\n<h3>B</h3>\n<h2>C</h2><h4>D</h4>')).toBe('<h2>A</h2>\n<h3>B</h3>\n<h2>C</h2><h3>D</h3>');
    expect(demoteHeadings('<p>none</p>')).toBe('<p>none</p>');
  });

  it('records one consent when many signatures are sent at once', async () => {
    const tenant = await createTenant(service);
    const world = await consentWorld(tenant, { purpose: 'CONSENT' });
    const fields = await signingFields(world.path);
    const results = await Promise.all(Array.from({ length: 8 }, () => post(`${world.path}/consent`, fields)));
    expect(results.map((result) => result.statusCode)).toEqual(Array(8).fill(200));
    expect(results.filter((result) => result.body.includes('Thank you for signing'))).toHaveLength(1);
    expect(await consentRows(world.person.personId)).toHaveLength(1);
    const jobs = await service.deps.db.selectFrom('jobs').select('job_id').where('workspace_id', '=', tenant.workspaceId).where('queue', '=', 'consent.copy').execute();
    expect(jobs).toHaveLength(1);
  });
});

describe('the signed copy and the withdrawal', () => {
  it('emails the PDF copy through SMTP once, with a withdrawal link that shows only the study, withdraws once, moves the participant to CANCELED and tells the webhooks', async () => {
    const tenant = await createTenant(service);
    const world = await consentWorld(tenant, { purpose: 'CONSENT' });
    expect((await post(`${world.path}/consent`, await signingFields(world.path, [['signedName', 'Ottoline Featherstone'], ['choice', 'quotes']]))).statusCode).toBe(200);
    expect(copiesTo(world.person.email)).toEqual([]);

    const report = await runJobs(tenant);
    expect(report.jobs.filter((job) => job.queue === 'consent.copy').map((job) => job.outcome)).toEqual(['completed']);
    const [mail, ...others] = copiesTo(world.person.email);
    expect(others).toEqual([]);
    expect(mail!.parsed.subject).toBe('Your signed consent form for Checkout interviews');
    expect(mail!.parsed.text).toContain('Your copy of the consent form “Consent to take part in a research interview”');
    expect(mail!.raw).not.toMatch(/^List-Unsubscribe:/m);
    const [attachment] = mail!.parsed.attachments;
    expect(attachment!.filename).toBe(`consent-${world.form.consentFormId}-v1.pdf`);
    expect(attachment!.content.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const [row] = await consentRows(world.person.personId);
    expect(row!.copy_sent_at).not.toBeNull();

    // A second run (a retried job, an instance racing) sends nothing more.
    await service.deps.db.updateTable('jobs').set({ state: 'queued', run_after: new Date(0).toISOString() }).where('workspace_id', '=', tenant.workspaceId).where('queue', '=', 'consent.copy').execute();
    await runJobs(tenant);
    expect(copiesTo(world.person.email)).toHaveLength(1);

    const withdrawal = withdrawalPathOf(mail!);
    const links = await service.deps.db.selectFrom('participant_links').select(['purpose', 'expires_at']).where('participant_id', '=', world.participantId).where('purpose', '=', 'WITHDRAWAL').execute();
    expect(links).toEqual([{ purpose: 'WITHDRAWAL', expires_at: null }]);
    const page = await get(withdrawal);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h1>Withdraw your consent</h1>');
    expect(page.body).toContain('You can withdraw your consent to Checkout interviews at any time');
    expect(page.body).toContain(`<form method="post" action="${withdrawal}/withdraw"`);
    for (const personal of [world.person.email, 'Ottoline', 'Featherstone', 'video-recorded']) expect(page.body).not.toContain(personal);

    const done = await post(`${withdrawal}/withdraw`, [['formToken', field(page.body, 'formToken')!]]);
    expect(done.statusCode, done.body).toBe(200);
    expect(done.body).toContain('Your consent is withdrawn');
    expect((await consentRows(world.person.personId))[0]!.withdrawn_at).not.toBeNull();
    const participant = await participantRow(world.participantId);
    expect(participant.status).toBe('CANCELED');
    const events = await service.deps.db.selectFrom('participant_status_events').select(['field', 'from_value', 'to_value', 'user_id']).where('participant_id', '=', world.participantId).where('field', '=', 'status').execute();
    expect(events).toEqual([{ field: 'status', from_value: 'NOT_STARTED', to_value: 'CANCELED', user_id: null }]);
    const types = await webhookTypes(tenant);
    expect(types.filter((type) => type === 'consent.withdrawn')).toHaveLength(1);
    expect(types).toContain('participant.status_changed');
    const read = await call(service, 'GET', `/consent-submissions/${row!.consent_submission_id}`, { token: tenant.token });
    expect(read.json<{ withdrawnAt: string | null }>().withdrawnAt).not.toBeNull();

    // Reused: the same link again, posted or opened, says it was withdrawn and changes nothing.
    const again = await post(`${withdrawal}/withdraw`, [['formToken', field(page.body, 'formToken')!]]);
    expect(again.body).toContain('Your consent is already withdrawn');
    expect((await get(withdrawal)).body).toContain('Your consent is already withdrawn');
    expect((await webhookTypes(tenant)).filter((type) => type === 'consent.withdrawn')).toHaveLength(1);
    // The consent link now says it was withdrawn, and asks for nothing.
    const consentAgain = await get(world.path);
    expect(consentAgain.body).toContain('You withdrew your consent');
    expect(consentAgain.body).not.toContain('<form');
  });

  it('writes the copy in the study\'s language (Arabic, right to left on the page)', async () => {
    const tenant = await createTenant(service);
    const world = await consentWorld(tenant, { purpose: 'CONSENT', studyPlan: { language: 'ar' } });
    const page = await get(world.path);
    expect(page.body).toContain('<html lang="ar" dir="rtl">');
    expect(page.body).toContain('وقّع النموذج');
    expect((await post(`${world.path}/consent`, await signingFields(world.path))).statusCode).toBe(200);
    await runJobs(tenant);
    const [mail] = copiesTo(world.person.email);
    expect(mail!.parsed.subject).toBe('نموذج موافقتك الموقّع على Checkout interviews');
    const withdrawal = await get(withdrawalPathOf(mail!));
    expect(withdrawal.body).toContain('<html lang="ar" dir="rtl">');
    expect(withdrawal.body).toContain('اسحب موافقتي');
  });

  it('keeps the signature when SMTP refuses for now, and sends the copy on the retry, once, with one working withdrawal link', async () => {
    const tenant = await createTenant(service);
    const world = await consentWorld(tenant, { purpose: 'CONSENT' });
    expect((await post(`${world.path}/consent`, await signingFields(world.path))).statusCode).toBe(200);
    receiver.refuseNextData(1, { code: 451, message: '4.3.0 Try again later' });
    const first = await runJobs(tenant);
    expect(first.jobs.filter((job) => job.queue === 'consent.copy').map((job) => job.outcome)).toEqual(['retrying']);
    expect(copiesTo(world.person.email)).toEqual([]);
    expect(await consentRows(world.person.personId)).toHaveLength(1);
    expect((await consentRows(world.person.personId))[0]!.copy_sent_at).toBeNull();
    // The failed attempt's link went with it.
    expect(await service.deps.db.selectFrom('participant_links').select('link_id').where('participant_id', '=', world.participantId).where('purpose', '=', 'WITHDRAWAL').execute()).toEqual([]);
    await service.deps.db.updateTable('jobs').set({ run_after: new Date(0).toISOString() }).where('workspace_id', '=', tenant.workspaceId).where('queue', '=', 'consent.copy').execute();
    const second = await runJobs(tenant);
    expect(second.jobs.filter((job) => job.queue === 'consent.copy').map((job) => job.outcome)).toEqual(['completed']);
    expect(copiesTo(world.person.email)).toHaveLength(1);
    expect(await service.deps.db.selectFrom('participant_links').select('link_id').where('participant_id', '=', world.participantId).where('purpose', '=', 'WITHDRAWAL').execute()).toHaveLength(1);
  });

  it('leaves a COMPLETED participant COMPLETED (the consent is withdrawn all the same)', async () => {
    const tenant = await createTenant(service);
    const world = await consentWorld(tenant, { purpose: 'CONSENT', studyType: 'SURVEY', screener: false });
    expect((await post(`${world.path}/consent`, await signingFields(world.path))).statusCode).toBe(200);
    for (const status of ['INVITED', 'COMPLETED']) {
      const moved = await call(service, 'PATCH', `/studies/${world.studyId}/participants/${world.participantId}`, { token: tenant.token, body: { status } });
      expect(moved.statusCode, moved.body).toBe(200);
    }
    const withdrawal = await issueLink(tenant, world.studyId, world.participantId, 'WITHDRAWAL');
    const page = await get(withdrawal.path);
    const done = await post(`${withdrawal.path}/withdraw`, [['formToken', field(page.body, 'formToken')!]]);
    expect(done.body).toContain('Your consent is withdrawn');
    expect((await participantRow(world.participantId)).status).toBe('COMPLETED');
    expect((await consentRows(world.person.personId))[0]!.withdrawn_at).not.toBeNull();
    expect((await webhookTypes(tenant)).filter((type) => type === 'consent.withdrawn')).toHaveLength(1);
  });

  it('a withdrawal link with no consent on record says so, and withdraws nothing', async () => {
    const tenant = await createTenant(service);
    const world = await consentWorld(tenant, { purpose: 'WITHDRAWAL' });
    const page = await get(world.path);
    expect(page.body).toContain('There is no consent to withdraw');
    expect(page.body).not.toContain('<form');
    expect((await participantRow(world.participantId)).status).toBe('NOT_STARTED');
  });
});

describe('refusals', () => {
  it('refuses a post without the form token, with an altered one, another version\'s, from another site or origin: nothing is written', async () => {
    const tenant = await createTenant(service);
    const world = await consentWorld(tenant, { purpose: 'CONSENT' });
    const fields = await signingFields(world.path);
    const token = fields[0]![1];
    const altered = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
    const rest = fields.slice(2);
    for (const [name, sent, headers] of [
      ['no token', [['version', '1'], ...rest], {}],
      ['altered token', [['formToken', altered], ['version', '1'], ...rest], {}],
      ['another version', [['formToken', token], ['version', '2'], ...rest], {}],
      ['no version', [['formToken', token], ...rest], {}],
      ['cross-site', fields, { 'sec-fetch-site': 'cross-site' }],
      ['another origin', fields, { origin: 'https://evil.example' }],
    ] as [string, [string, string][], Record<string, string>][]) {
      const response = await service.app.inject({
        method: 'POST',
        url: `${world.path}/consent`,
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...(name === 'another origin' ? {} : { 'sec-fetch-site': 'same-origin' }), ...headers },
        payload: new URLSearchParams(sent).toString(),
      });
      expect(response.statusCode, name).toBe(403);
      expect(response.body, name).toContain('Your answers were not sent');
    }
    expect(await consentRows(world.person.personId)).toEqual([]);

    // The withdrawal's form too.
    expect((await post(world.path.replace(/$/, '/consent'), fields)).statusCode).toBe(200);
    const withdrawal = await issueLink(tenant, world.studyId, world.participantId, 'WITHDRAWAL');
    const page = await get(withdrawal.path);
    const withdrawToken = field(page.body, 'formToken')!;
    for (const [name, sent, headers] of [
      ['no token', [], {}],
      ['the consent form\'s token', [['formToken', token]], {}],
      ['altered token', [['formToken', withdrawToken.slice(0, -1) + (withdrawToken.endsWith('A') ? 'B' : 'A')]], {}],
      ['cross-site', [['formToken', withdrawToken]], { 'sec-fetch-site': 'cross-site' }],
    ] as [string, [string, string][], Record<string, string>][]) {
      const response = await post(`${withdrawal.path}/withdraw`, sent, headers);
      expect(response.statusCode, name).toBe(403);
    }
    expect((await consentRows(world.person.personId))[0]!.withdrawn_at).toBeNull();
  });

  it('answers forged, altered, otherwise spelled, expired and wrong-purpose tokens with a plain page that names nobody', async () => {
    const tenant = await createTenant(service);
    const world = await consentWorld(tenant, { purpose: 'CONSENT' });
    const token = world.path.slice('/p/'.length);
    const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
    const percentEncoded = `%${token.charCodeAt(0).toString(16).toUpperCase()}${token.slice(1)}`;
    for (const forged of [flip(token, 0), flip(token, 30), token.slice(0, -1), 'A'.repeat(43), percentEncoded]) {
      for (const step of ['consent', 'withdraw']) {
        const page = step === 'consent' ? await get(`/p/${forged}/${step}`) : await post(`/p/${forged}/${step}`, []);
        expect(page.statusCode, `${forged}/${step}`).toBe(404);
        expect(page.body).toContain('This link does not work');
        expect(page.body).not.toContain('Test workspace');
      }
    }
    // Wrong purpose: a consent link does not withdraw, a withdrawal link does not sign or answer questions.
    const consentFields = await signingFields(world.path);
    expect((await post(`${world.path}/withdraw`, [['formToken', 'x']])).statusCode).toBe(404);
    const withdrawal = await issueLink(tenant, world.studyId, world.participantId, 'WITHDRAWAL');
    expect((await get(`${withdrawal.path}/consent`)).statusCode).toBe(404);
    expect((await post(`${withdrawal.path}/consent`, consentFields)).statusCode).toBe(404);
    expect((await post(withdrawal.path, [['formToken', 'x'], ['startedAt', '1']])).statusCode).toBe(404);
    const screener = await issueLink(tenant, world.studyId, world.participantId, 'SCREENER');
    expect((await post(`${screener.path}/withdraw`, [['formToken', 'x']])).statusCode).toBe(404);
    expect(await consentRows(world.person.personId)).toEqual([]);
    // Expired.
    await service.deps.db.updateTable('participant_links').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('link_id', '=', world.linkId).execute();
    expect((await get(world.path)).statusCode).toBe(410);
    const expired = await post(`${world.path}/consent`, consentFields);
    expect(expired.statusCode).toBe(410);
    expect(expired.body).toContain('This link has expired');
    expect(await consentRows(world.person.personId)).toEqual([]);
  });

  it('says plainly, with no form, when the study is paused or closed or the person opted out; withdrawal stays open', async () => {
    const tenant = await createTenant(service);
    const paused = await consentWorld(tenant, { purpose: 'CONSENT' });
    const closed = await consentWorld(tenant, { purpose: 'CONSENT' });
    const optedOut = await consentWorld(tenant, { purpose: 'CONSENT' });
    expect((await post(`${closed.path}/consent`, await signingFields(closed.path))).statusCode).toBe(200);
    expect((await call(service, 'POST', `/studies/${paused.studyId}/status`, { token: tenant.token, body: { status: 'PAUSED' } })).statusCode).toBe(200);
    expect((await call(service, 'POST', `/studies/${closed.studyId}/status`, { token: tenant.token, body: { status: 'CLOSED' } })).statusCode).toBe(200);
    expect((await call(service, 'PUT', `/people/${optedOut.person.personId}/opted-out`, { token: tenant.token, body: { isOptedOut: true } })).statusCode).toBe(200);
    for (const [world, text] of [
      [paused, 'This study is paused'],
      [closed, 'This study has closed'],
      [optedOut, 'You will not be contacted'],
    ] as const) {
      const page = await get(world.path);
      expect(page.body).toContain(text);
      expect(page.body).not.toContain('<form');
    }
    const withdrawal = await issueLink(tenant, closed.studyId, closed.participantId, 'WITHDRAWAL');
    const page = await get(withdrawal.path);
    expect(page.body).toContain('Withdraw my consent');
    expect((await post(`${withdrawal.path}/withdraw`, [['formToken', field(page.body, 'formToken')!]])).body).toContain('Your consent is withdrawn');
  });

  it('rate-limits the consent and withdrawal pages per link and per address', async () => {
    const limited = await startTestService({ participantRateLimitMax: 5, participantLinkRateLimitMax: 2 }, { rateLimitKeyPrefix: `consent-pages-${Date.now()}` });
    try {
      const tenant = await createTenant(limited);
      const made = await call(limited, 'POST', '/consent-forms', { token: tenant.token, body: consentForm });
      const studyId = await createStudy(limited, tenant, { studyType: 'INTERVIEWS', launch: true, studyPlan: { consentFormId: made.json<{ consentFormId: string }>().consentFormId } });
      const person = await createPerson(limited, tenant);
      const [participant] = await addParticipants(limited, tenant, studyId, [person.personId]);
      const linkOf = async (purpose: Purpose) =>
        new URL((await call(limited, 'POST', `/studies/${studyId}/participants/${participant!.participantId}/links`, { token: tenant.token, body: { purpose } })).json<{ url: string }>().url).pathname;
      const consent = await linkOf('CONSENT');
      const withdrawal = await linkOf('WITHDRAWAL');
      const at = (method: 'GET' | 'POST', url: string, address: string) =>
        limited.app.inject({ method, url, remoteAddress: address, headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' }, payload: method === 'POST' ? 'formToken=x' : undefined });
      expect((await at('GET', `${consent}/consent`, '192.0.2.10')).statusCode).toBe(200);
      expect((await at('POST', `${consent}/consent`, '192.0.2.10')).statusCode).toBe(403);
      const refused = await at('GET', `${consent}/consent`, '192.0.2.11');
      expect(refused.statusCode).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect((await at('GET', withdrawal, '192.0.2.10')).statusCode).toBe(200);
      expect((await at('POST', `${withdrawal}/withdraw`, '192.0.2.10')).statusCode).toBe(403);
      expect((await at('POST', `${withdrawal}/withdraw`, '192.0.2.12')).statusCode).toBe(429);
      expect((await at('GET', `/p/${'A'.repeat(43)}/consent`, '192.0.2.10')).statusCode).toBe(404);
      // The address has spent its 5: even an unknown link is refused to it, not to another address.
      expect((await at('GET', `/p/${'A'.repeat(43)}/consent`, '192.0.2.10')).statusCode).toBe(429);
      expect((await at('GET', `/p/${'A'.repeat(43)}/consent`, '192.0.2.13')).statusCode).toBe(404);
    } finally {
      await limited.stop();
    }
  });
});

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, callTestHelper, createTenant, type TestService } from '../../../test/harness.js';
import { startPrivateTestService } from '../../../test/private-database.js';
import { createPopulation, createProperties } from '../../../test/people-factory.js';
import { type SmtpReceiver, smtpConfig, startSmtpReceiver } from '../../../test/smtp-receiver.js';
import { WebhookReceiver } from '../../../test/webhook-receiver.js';
import { csvOf, settleImport, startImport } from '../imports/test-support.js';
import { createTemplate, runMail } from '../messages/test-support.js';
import { createForm, submit } from '../signups/test-support.js';
import { PURGE_QUEUE } from './purge.js';

/**
 * Issue 32, item 5: deletion means gone. A person with distinctive values travels through every
 * family (created with an idempotency key, imported, signed up with a consent, a participant with
 * a note, messages sent, failed and retried, an incentive, a preview, a search kept for replay,
 * webhook events delivered); DELETE /people/{id} must leave none of their values in any column of
 * any table. The walk reads the schema itself (information_schema), so a table or column added
 * later is walked too: a family that copies personal data somewhere new fails this test until its
 * copy is erased with the person (src/families/people/erasure.ts).
 */

let receiver: SmtpReceiver;
let hooks: WebhookReceiver;
let service: TestService;
beforeAll(async () => {
  receiver = await startSmtpReceiver();
  hooks = await WebhookReceiver.start();
  // A database of its own: the walk reads every row of every table.
  service = await startPrivateTestService({ ...smtpConfig(receiver), webhookAllowPrivateTargets: true, webhookAllowHttp: true });
});
afterAll(async () => {
  await service.stop();
  await receiver.close();
  await hooks.close();
});

/** Column types that cannot hold text: every other column is read as text (text, varchar, jsonb, arrays, tsvector, bytea, …). */
const nonTextTypes = new Set(['integer', 'bigint', 'smallint', 'boolean', 'numeric', 'real', 'double precision', 'date', 'timestamp with time zone', 'timestamp without time zone', 'xid8', 'uuid', 'interval']);

/** Every (table.column, value) of the schema where a column holds one of `values` (case-insensitively; bytea byte for byte). */
async function walkEveryTable(values: readonly string[]): Promise<string[]> {
  const db = service.deps.db;
  const { rows: columns } = await sql<{ table_name: string; column_name: string; data_type: string }>`
    select c.table_name, c.column_name, c.data_type
    from information_schema.columns c
    join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
    where c.table_schema = current_schema() and t.table_type = 'BASE TABLE'
    order by c.table_name, c.ordinal_position
  `.execute(db);
  const walked = columns.filter((column) => !nonTextTypes.has(column.data_type));
  // The walk must reach the tables that hold personal data, or it proves nothing.
  for (const expected of ['people.email', 'people.properties', 'messages.text_body', 'message_events.detail', 'idempotency_keys.response_body', 'import_chunks.data', 'webhook_messages.payload', 'jobs.payload', 'participants.note']) {
    expect(walked.map((column) => `${column.table_name}.${column.column_name}`)).toContain(expected);
  }
  const found: string[] = [];
  for (const { table_name: table, column_name: column, data_type: type } of walked) {
    // One statement per column: which of the values some row of it holds.
    const match =
      type === 'bytea'
        ? sql`position(convert_to(v.value, 'UTF8') in t.${sql.ref(column)}) > 0 or position(convert_to(lower(v.value), 'UTF8') in t.${sql.ref(column)}) > 0`
        : sql`position(lower(v.value) in lower(t.${sql.ref(column)}::text)) > 0`;
    const { rows } = await sql<{ value: string }>`
      select v.value from unnest(${[...values]}::text[]) as v (value)
      where exists (select 1 from ${sql.table(table)} as t where ${match})
    `.execute(db);
    for (const row of rows) found.push(`${table}.${column}: ${row.value}`);
  }
  return found;
}

const letters = (length: number) => Array.from({ length }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join('');

describe('DELETE /people/{personId}', () => {
  it("leaves none of the person's values in any column of any table, whatever family copied them", async () => {
    const tenant = await createTenant(service);
    const key = (name: string) => ({ 'idempotency-key': `${name}-${letters(12)}` });
    const tag = letters(10);
    const values = {
      email: `erasable.${tag}@example.test`,
      additionalEmail: `second.${tag}@example.test`,
      firstName: `Wilhelmina${tag}`,
      lastName: `Quasimodo${tag}`,
      importedLastName: `Importedname${tag}`,
      phone: '+44 20 7946 0417',
      passport: `PASS-${tag.toUpperCase()}`,
      diagnosis: `diagnosis-${tag}`,
      nickname: `nick-${tag}`,
    };
    const { Passport, Diagnosis } = await createProperties(service, tenant, [
      { name: 'Passport', propertyType: 'STRING', isUnique: true, isPII: true },
      { name: 'Diagnosis', propertyType: 'STRING', isPHI: true },
      { name: 'Nickname', propertyType: 'STRING' },
    ]);
    const types = await call(service, 'GET', '/webhook-event-types', { token: tenant.token });
    const eventTypes = types.json<{ results: { type: string }[] }>().results.map((type) => type.type).filter((type) => type !== 'webhook.test');
    expect((await call(service, 'POST', '/webhook-endpoints', { token: tenant.token, body: { url: hooks.url(), eventTypes } })).statusCode).toBe(201);

    // Created with an idempotency key: the kept answer is the whole Person.
    const created = await call(service, 'POST', '/people', {
      token: tenant.token,
      headers: key('create'),
      body: {
        email: values.email,
        firstName: values.firstName,
        lastName: values.lastName,
        phone: values.phone,
        additionalEmails: [values.additionalEmail],
        properties: { [Passport!]: values.passport, [Diagnosis!]: values.diagnosis },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const personId = created.json<{ personId: string }>().personId;
    const populationId = await createPopulation(service, tenant);
    expect((await call(service, 'POST', `/populations/${populationId}/members`, { token: tenant.token, body: { personIds: [personId] } })).statusCode).toBeLessThan(300);

    // An import updates them (its stored file held their email; its report holds row numbers).
    const importId = await startImport(service, tenant, csvOf([['email', 'lastName', 'Nickname'], [values.email, values.importedLastName, values.nickname], ['not-an-email', 'x', 'y']]));
    expect(await settleImport(service, tenant, importId)).toMatchObject({ status: 'COMPLETED', rowsImported: 1, rowsFailed: 1 });

    // A public signup with a consent (for a known email the submission is kept without it; the
    // consent itself is recorded below, by the workspace).
    const form = await createForm(service, tenant, { consentFormId: 'panel-terms' });
    const signedUp = await submit(service, form.signupFormId, { email: values.email, firstName: values.firstName, referralCode: 'SPRING', consentFormId: 'panel-terms' });
    expect(signedUp.statusCode, signedUp.body).toBe(201);

    // A study: a participant with a note about them, invited with a message, sent more.
    const study = await call(service, 'POST', '/studies', { token: tenant.token, body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Erasure', externalName: 'Paying online', consentFormId: 'study-terms' } } });
    const studyId = study.json<{ studyId: string }>().studyId;
    expect((await call(service, 'POST', `/studies/${studyId}/launch`, { token: tenant.token })).statusCode).toBe(200);
    const added = await call(service, 'POST', `/studies/${studyId}/participants`, { token: tenant.token, headers: key('participants'), body: { personIds: [personId] } });
    expect(added.statusCode, added.body).toBeLessThan(300);
    const participantId = added.json<{ results: { participantId: string }[] }>().results[0]!.participantId;
    const templateId = await createTemplate(service, tenant);
    const invited = await call(service, 'PATCH', `/studies/${studyId}/participants/${participantId}`, {
      token: tenant.token,
      body: { status: 'INVITED', note: `Spoke with ${values.firstName} ${values.lastName}`, sendMessage: { templateId } },
    });
    expect(invited.statusCode, invited.body).toBe(200);
    expect(await runMail(service, tenant)).toMatchObject({ sent: 1 });
    expect(receiver.to(values.email)[0]!.parsed.text).toContain(values.firstName);
    // One message that cannot be rendered, one the server asks to retry (quoting the address).
    // Over the render budget for everyone but the catalogue's example, with which saving renders it.
    const failing = await createTemplate(service, tenant, {
      name: 'Failing',
      subject: 'x',
      textBody: '{{ person.firstName }}{% unless person.email == "ada@example.org" %}{% for i in (1..100000000) %}{{ i }}{% endfor %}{% endunless %}',
    });
    expect((await call(service, 'POST', `/studies/${studyId}/messages`, { token: tenant.token, headers: key('send'), body: { templateId: failing, participantIds: [participantId] } })).statusCode).toBe(200);
    expect(await runMail(service, tenant)).toMatchObject({ failed: 1 });
    receiver.refuseRecipient(values.email, { code: 451, message: `4.2.0 <${values.email}> (${values.firstName}) mailbox busy` });
    expect((await call(service, 'POST', `/studies/${studyId}/messages`, { token: tenant.token, body: { templateId, participantIds: [participantId] } })).statusCode).toBe(200);
    expect(await runMail(service, tenant)).toMatchObject({ retrying: 1 });

    // A preview and a search, kept for replay.
    const preview = await call(service, 'POST', `/message-templates/${templateId}/preview`, { token: tenant.token, headers: key('preview'), body: { personId, studyId } });
    expect(preview.body).toContain(values.firstName);
    const search = await call(service, 'POST', '/people/search', {
      token: tenant.token,
      headers: key('search'),
      body: { filter: { filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'EMAIL' }, comparison: 'EQUALS', value: values.email }] } },
    });
    expect(search.body).toContain(values.email);

    // Consent and an incentive (its answer names the recipient's email).
    expect((await call(service, 'POST', '/consent-submissions', { token: tenant.token, headers: key('consent'), body: { personId, studyId, text: 'I agree' } })).statusCode).toBe(201);
    const incentive = await call(service, 'POST', '/incentives', { token: tenant.token, headers: key('incentive'), body: { participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: 5000 } });
    expect(incentive.statusCode, incentive.body).toBe(201);
    expect(incentive.body).toContain(values.email);

    // Opted out and back in; the webhook events delivered.
    for (const isOptedOut of [true, false]) expect((await call(service, 'PUT', `/people/${personId}/opted-out`, { token: tenant.token, body: { isOptedOut } })).statusCode).toBe(200);
    expect((await callTestHelper(service, 'POST', '/webhooks/run', { query: { workspaceId: tenant.workspaceId } })).statusCode).toBe(200);
    expect(hooks.received.length).toBeGreaterThan(0);

    const personal = Object.values(values);
    // Before: the walk finds them (it would find them after, were they left).
    const before = await walkEveryTable(personal);
    for (const place of ['people.email', 'messages.text_body', 'idempotency_keys.response_body', 'participants.note']) expect(before.some((found) => found.startsWith(place)), `${place} in ${before.join(', ')}`).toBe(true);

    const deleted = await call(service, 'DELETE', `/people/${personId}`, { token: tenant.token });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(await walkEveryTable(personal)).toEqual([]);

    // Through the API too: their messages say what happened, not to whom or what.
    const messages = await call(service, 'GET', '/messages', { token: tenant.token, query: { personId } });
    expect(messages.statusCode).toBe(200);
    expect(messages.json<{ total: number }>().total).toBe(3);
    for (const value of personal) expect(messages.body, value).not.toContain(value);
    for (const message of messages.json<{ results: { messageId: string }[] }>().results) {
      const detail = await call(service, 'GET', `/messages/${message.messageId}`, { token: tenant.token });
      for (const value of personal) expect(detail.body, value).not.toContain(value);
    }

    // The hourly purge then marks them purged and vacuums the old row versions away; still nothing.
    try {
      expect((await callTestHelper(service, 'POST', '/clock', { body: { now: new Date(Date.now() + 2 * 60 * 60 * 1000).toISOString() } })).statusCode).toBe(200);
      const jobs = await callTestHelper(service, 'POST', '/jobs/run', { query: { workspaceId: tenant.workspaceId } });
      expect(jobs.json<{ jobs: { queue: string; outcome: string }[] }>().jobs.filter((job) => job.queue === PURGE_QUEUE)).toMatchObject([{ outcome: 'completed' }]);
    } finally {
      await callTestHelper(service, 'DELETE', '/clock');
    }
    const row = await service.deps.db.selectFrom('people').select(['email', 'deleted_at', 'purged_at']).where('person_id', '=', personId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ email: null, deleted_at: expect.any(String), purged_at: expect.any(String) });
    expect(await walkEveryTable(personal)).toEqual([]);
  });
});

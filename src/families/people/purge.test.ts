import { auditEntriesOf } from '../../../test/audit-entries.js';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, callTestHelper, createTenant, type Tenant, type TestService, uniqueEmail } from '../../../test/harness.js';
import { startPrivateTestService } from '../../../test/private-database.js';
import { createPerson, createPopulation, createProperties, getPerson } from '../../../test/people-factory.js';
import { recordConsent } from '../../../test/consent-factory.js';
import { addParticipants, createStudy } from '../../../test/participants-factory.js';
import { csvOf, settleImport, startImport } from '../imports/test-support.js';
import { createForm, getSubmission, submitted } from '../signups/test-support.js';
import { PURGE_GRACE_DAYS, PURGE_QUEUE } from './purge.js';

let service: TestService;
beforeAll(async () => {
  // A database of its own: its VACUUM and its scan of every table for erased text then read this
  // file's rows alone, not every other file's on the run's shared PostgreSQL database (which took
  // it from about 1 s to 9-30 s there as the suite grew).
  service = await startPrivateTestService();
});
afterAll(async () => service.stop());

const DAY_MS = 24 * 60 * 60 * 1000;
const deletedAt = new Date('2026-03-01T00:00:00.000Z');

async function setClock(at: Date) {
  expect((await callTestHelper(service, 'POST', '/clock', { body: { now: at.toISOString() } })).statusCode).toBe(200);
}

/**
 * Runs the tenant's due background work, its purge among them. Its own workspace's alone: on
 * PostgreSQL the test files share the database, and a purge of every workspace would erase other
 * files' deleted people (and theirs this file's) at this file's clock.
 */
async function runJobs(tenant: Tenant) {
  const response = await callTestHelper(service, 'POST', '/jobs/run', { query: { workspaceId: tenant.workspaceId } });
  expect(response.statusCode, response.body).toBe(200);
  const purges = response.json<{ jobs: { queue: string; workspaceId: string; outcome: string }[] }>().jobs.filter((run) => run.queue === PURGE_QUEUE);
  expect(purges).toEqual([{ ...purges[0], queue: PURGE_QUEUE, workspaceId: tenant.workspaceId, outcome: 'completed' }]);
}

const personRow = (personId: string) => service.deps.db.selectFrom('people').selectAll().where('person_id', '=', personId).executeTakeFirstOrThrow();

/** Every table of the schema whose rows, as text, contain `needle` (case-insensitively). */
async function tablesHolding(needle: string): Promise<string[]> {
  const { rows: tables } = await sql<{ table_name: string }>`
    select table_name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE' order by table_name
  `.execute(service.deps.db);
  const holding: string[] = [];
  for (const { table_name: table } of tables) {
    const { rows } = await sql<{ found: boolean }>`
      select exists (select 1 from ${sql.table(table)} t where position(lower(${needle}) in lower(t::text)) > 0) as found
    `.execute(service.deps.db);
    if (rows[0]?.found) holding.push(table);
  }
  return holding;
}

describe(`the deletion purge (grace: ${PURGE_GRACE_DAYS} days)`, () => {
  it("erases a deleted person's personal data at deletion and the purge marks them purged and vacuums, and only theirs", async () => {
    await setClock(deletedAt);
    const tenant = await createTenant(service);
    const { Code, Secret } = await createProperties(service, tenant, [
      { name: 'Code', propertyType: 'STRING', isUnique: true },
      { name: 'Secret', propertyType: 'STRING', isPII: true },
    ]);
    const populationId = await createPopulation(service, tenant);
    const email = uniqueEmail('erase.me');
    const otherEmail = uniqueEmail('erase.me.too');
    const code = `CODE-${email}`;
    const keptCode = `KEEP-${uniqueEmail('kept')}`;
    const gone = await createPerson(service, tenant, {
      email,
      firstName: 'Erase',
      lastName: 'Me',
      phone: '+44 20 7946 0999',
      additionalEmails: [otherEmail],
      additionalPhones: ['+1 555 0199'],
      populationIds: [populationId],
      properties: { [Code!]: code, [Secret!]: 'my secret' },
    });
    // An import touched them too: its stored file held their email.
    const importId = await startImport(service, tenant, csvOf([['email', 'firstName', 'code'], [email, 'Erased', code], ['bad', 'Row', '']]));
    expect(await settleImport(service, tenant, importId)).toMatchObject({ status: 'COMPLETED', rowsImported: 1, rowsFailed: 1 });
    const kept = await createPerson(service, tenant, { firstName: 'Kept', populationIds: [populationId], properties: { [Code!]: keptCode } });

    const deleted = await call(service, 'DELETE', `/people/${gone.personId}`, { token: tenant.token });
    expect(deleted.statusCode, deleted.body).toBeLessThan(300);
    expect((await getPerson(service, tenant, gone.personId)).statusCode).toBe(404);

    // Deletion erases at once (erasure.ts); the purge marks the row purged and vacuums the old versions away.
    expect(await personRow(gone.personId)).toMatchObject({ email: null, first_name: null, properties: {}, purged_at: null });

    const purgeAt = new Date(deletedAt.getTime() + (PURGE_GRACE_DAYS + 1) * DAY_MS);
    await setClock(purgeAt);
    await runJobs(tenant);
    // The old row versions that still held the data are vacuumed away, from the tables and their indexes.
    const purgeRuns = await service.deps.db.selectFrom('jobs').select('result').where('workspace_id', '=', tenant.workspaceId).where('queue', '=', PURGE_QUEUE).where('state', '=', 'completed').execute();
    expect(purgeRuns.map((run) => run.result)).toContainEqual({ peoplePurged: 1, importsClosed: 0, backfillsClosed: 0, vacuumed: true });
    // The trail names whom the service purged, by id alone; and the import it completed.
    expect(await auditEntriesOf(service.deps.db, tenant.workspaceId, 'purgePerson')).toEqual([{ actor_kind: 'SERVICE', actor_service: PURGE_QUEUE, resource_type: 'person', resource_id: gone.personId, after_state: null }]);
    expect(await auditEntriesOf(service.deps.db, tenant.workspaceId, 'completeImport')).toEqual([{ actor_kind: 'SERVICE', actor_service: 'people.import', resource_type: 'import', resource_id: importId, after_state: 'COMPLETED' }]);
    const purged = await personRow(gone.personId);
    expect(purged).toMatchObject({
      email: null,
      first_name: null,
      last_name: null,
      phone: null,
      additional_emails: [],
      additional_phones: [],
      properties: {},
      import_source: null,
      purged_at: purgeAt.toISOString(),
    });
    expect(purged.deleted_at).not.toBeNull();
    for (const needle of [email, otherEmail, code, '+44 20 7946 0999', 'my secret']) expect(await tablesHolding(needle), needle).toEqual([]);
    const memberships = await service.deps.db.selectFrom('population_members').select('person_id').where('population_id', '=', populationId).execute();
    expect(memberships).toEqual([{ person_id: kept.personId }]);

    // The person kept is untouched.
    const keptRead = await getPerson(service, tenant, kept.personId);
    expect(keptRead.json()).toMatchObject({ email: kept.email, firstName: 'Kept', populationIds: [populationId], properties: { [Code!]: keptCode } });

    // Running again changes nothing.
    await setClock(new Date(purgeAt.getTime() + DAY_MS));
    await runJobs(tenant);
    expect(await personRow(gone.personId)).toEqual(purged);
    expect((await getPerson(service, tenant, gone.personId)).statusCode).toBe(404);
  });

  it("erases a deleted person's consent submissions with them: gone from the table and from consent searches, and only theirs", async () => {
    await setClock(deletedAt);
    const tenant = await createTenant(service);
    const studyId = await createStudy(service, tenant, { studyType: 'SURVEY', studyPlan: { consentFormId: 'consent-v1' } });
    const form = await createForm(service, tenant, { consentFormId: 'panel-terms' });
    const gone = await createPerson(service, tenant);
    const kept = await createPerson(service, tenant);
    await addParticipants(service, tenant, studyId, [gone.personId, kept.personId]);
    const goneConsents = [
      await recordConsent(service, tenant, { personId: gone.personId, studyId, text: 'I agree' }),
      await recordConsent(service, tenant, { personId: gone.personId, signupFormId: form.signupFormId }),
    ];
    const keptConsent = await recordConsent(service, tenant, { personId: kept.personId, studyId });
    // A public signup's consent too: its submission (which references it) stays, without it.
    const signup = await submitted(service, form.signupFormId, { consentFormId: 'panel-terms' });
    const signupSubmission = await getSubmission(service, tenant, form.signupFormId, signup.submissionId);
    expect(signupSubmission.consentSubmissionId).toMatch(/^cns_/);
    const consentSearch = async () => {
      const response = await call(service, 'POST', '/people/search', {
        token: tenant.token,
        body: { filter: { filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'CONSENT_FORM_WAS_SUBMITTED' }, comparison: 'IS_TRUE' }] }, pageInfo: { size: 100 } },
      });
      expect(response.statusCode, response.body).toBe(200);
      return response.json<{ results: { personId: string }[] }>().results.map((person) => person.personId).sort();
    };
    expect(await consentSearch()).toEqual([gone.personId, kept.personId, signupSubmission.personId].sort());

    for (const personId of [gone.personId, signupSubmission.personId]) expect((await call(service, 'DELETE', `/people/${personId}`, { token: tenant.token })).statusCode).toBe(200);
    expect(await consentSearch()).toEqual([kept.personId]);
    const consentsOf = (personIds: string[]) =>
      service.deps.db.selectFrom('consent_submissions').select('consent_submission_id').where('workspace_id', '=', tenant.workspaceId).where('person_id', 'in', personIds).orderBy('consent_submission_id').execute();
    // Erased at once, with the person (erasure.ts).
    expect(await consentsOf([gone.personId])).toEqual([]);

    await setClock(new Date(deletedAt.getTime() + (PURGE_GRACE_DAYS + 1) * DAY_MS));
    await runJobs(tenant);
    expect(await consentsOf([gone.personId, signupSubmission.personId])).toEqual([]);
    expect(await consentsOf([kept.personId])).toEqual([{ consent_submission_id: keptConsent.consentSubmissionId }]);
    for (const consent of goneConsents) expect((await call(service, 'GET', `/consent-submissions/${consent.consentSubmissionId}`, { token: tenant.token })).statusCode).toBe(404);
    const submissionRow = await service.deps.db.selectFrom('signup_submissions').select(['submission_id', 'consent_submission_id']).where('submission_id', '=', signup.submissionId).executeTakeFirstOrThrow();
    expect(submissionRow).toEqual({ submission_id: signup.submissionId, consent_submission_id: null });
    expect(await consentSearch()).toEqual([kept.personId]);
  });

  it('drops the stored file of an upload that never finished (its request died)', async () => {
    const tenant = await createTenant(service);
    const db = service.deps.db;
    const email = uniqueEmail('abandoned');
    const insertUpload = async (hoursAgo: number) => {
      const importId = `imp_abandoned_${hoursAgo}_${tenant.workspaceId}`;
      const at = new Date(Date.now() - hoursAgo * 60 * 60 * 1000).toISOString();
      await db
        .insertInto('imports')
        .values({ workspace_id: tenant.workspaceId, import_id: importId, status: 'RECEIVING', created_by_user_id: tenant.userId, created_at: at, updated_at: at })
        .execute();
      await db.insertInto('import_chunks').values({ workspace_id: tenant.workspaceId, import_id: importId, chunk_index: 0, data: Buffer.from(`email\n${email}\n`) }).execute();
      return importId;
    };
    const dead = await insertUpload(25);
    const inFlight = await insertUpload(0);
    await runJobs(tenant);
    const imports = await db.selectFrom('imports').select(['import_id', 'status']).where('workspace_id', '=', tenant.workspaceId).orderBy('import_id').execute();
    expect(imports).toEqual([
      { import_id: inFlight, status: 'RECEIVING' },
      { import_id: dead, status: 'FAILED' },
    ]);
    const chunks = await db.selectFrom('import_chunks').select('import_id').where('workspace_id', '=', tenant.workspaceId).execute();
    expect(chunks).toEqual([{ import_id: inFlight }]);
  });
});

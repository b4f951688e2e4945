import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.js';
import { eraseConsentsOfPeople } from '../consent/writer.js';
import { eraseLedgerOf } from '../incentives/ledger.js';
import { eraseMessagesOf } from '../messages/queries.js';
import { deleteLinksOfPeople } from '../participant-links/service.js';
import { deleteAccessOfPeople } from '../person-access/queries.js';
import { eraseResponsesOfPeople } from '../screener-responses/service.js';

/**
 * What deleting people erases, at once, in the transaction that deletes them (issue 32: deletion
 * means gone). Every copy of a person's personal data, family by family (found by reading every
 * table of src/db/migrations; src/families/people/erasure.test.ts walks every text, jsonb, array
 * and bytea column of the schema to prove it):
 *
 * - people: email, names, phones, additional emails and phones, custom property values (isPII or
 *   not: the values are the person's), the import source. The row stays, anonymous: its id, its
 *   dates and its counts-bearing links (participations, incentives, messages) keep history whole.
 * - person_unique_values: their claims (released by the caller), population_members: theirs.
 * - consent_submissions: theirs (a signup submission that named one keeps its row, without it).
 * - messages: the address and what was sent (rendered with their values); a failure's text is a
 *   fixed vocabulary already, and a text written before it becomes "The attempt failed".
 * - participants: the note on each of their participations (written about them).
 * - participant_links: every link to their pages (a way into what the service holds of them).
 * - person_access_links, person_sessions: their sign-in links and sessions of their own page.
 * - screener_answers, screener_responses: what they answered (their participations stay).
 * - incentive_ledger: the address an incentive went to and notes (a provider's words, a refusal's
 *   reason); each entry stays, with amount, currency, study, ids and actor (bookkeeping).
 *   incentives: a refusal's reason.
 * - idempotency_keys: every kept answer that holds their id or one of their emails (a Person, a
 *   Participant, an incentive with its recipient, a preview, a search page). A retry with one of
 *   those keys runs again instead of replaying the answer.
 *
 * What stays holds no personal value: the rows' ids, statuses and times, participant status
 * events, incentives (amount, status; the recipient's email is read from the person, so null),
 * signup submissions (form, referral code, review), webhook messages (ids and states only), jobs.
 * The hourly purge then marks the rows purged and vacuums the old row versions away (purge.ts).
 */
export async function erasePeople(transaction: Kysely<DB>, workspaceId: string, personIds: readonly string[]): Promise<void> {
  if (personIds.length === 0) return;
  if (!transaction.isTransaction) throw new Error('People are erased in the transaction that deletes them: pass a transaction');
  const people = personIds.map((personId) => ({ workspace_id: workspaceId, person_id: personId }));
  const batch = sql`(select x.workspace_id, x.person_id from jsonb_to_recordset(${JSON.stringify(people)}::jsonb) as x(workspace_id text, person_id text))`;

  // Kept answers are found by the values they hold, so these are read before the row is erased.
  const { rows: held } = await sql<{ needle: string }>`
    select distinct lower(v) as needle from people p
    cross join lateral unnest(array[p.person_id, p.email] || p.additional_emails) as v
    where (p.workspace_id, p.person_id) in ${batch} and v is not null and length(v) > 0
  `.execute(transaction);
  if (held.length > 0) {
    await sql`
      delete from idempotency_keys k
      where k.workspace_id = ${workspaceId} and k.response_body is not null
        and exists (select 1 from unnest(${held.map((row) => row.needle)}::text[]) as n (needle) where position(n.needle in lower(k.response_body)) > 0)
    `.execute(transaction);
  }

  await eraseConsentsOfPeople(transaction, people);
  await sql`delete from population_members where (workspace_id, person_id) in ${batch}`.execute(transaction);
  await eraseMessagesOf(transaction, batch);
  await deleteLinksOfPeople(transaction, batch);
  // Their sign-in links and sessions of their own page (src/families/person-access/): no way in stays.
  await deleteAccessOfPeople(transaction, workspaceId, personIds);
  await eraseResponsesOfPeople(transaction, batch);
  // The money ledger stays (the team's bookkeeping): amounts, ids and actors; the address paid and notes go.
  await eraseLedgerOf(transaction, batch);
  await sql`update incentives set approval_reason = null where (workspace_id, person_id) in ${batch} and approval_reason is not null`.execute(transaction);
  await sql`
    update participants set note = null, note_created_by_user_id = null
    where (workspace_id, person_id) in ${batch} and note is not null
  `.execute(transaction);
  await sql`
    update people set email = null, first_name = null, last_name = null, phone = null,
      additional_emails = '{}', additional_phones = '{}', properties = '{}', import_source = null
    where (workspace_id, person_id) in ${batch}
  `.execute(transaction);
}

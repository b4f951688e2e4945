import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DB, ParticipantLinkPurpose } from '../../db/schema.js';

export interface LinkRow {
  workspace_id: string;
  link_id: string;
  participant_id: string;
  study_id: string;
  person_id: string;
  purpose: ParticipantLinkPurpose;
  created_at: string;
  expires_at: string | null;
}

export async function insertLink(
  db: Kysely<DB>,
  link: { workspaceId: string; linkId: string; participantId: string; studyId: string; personId: string; purpose: ParticipantLinkPurpose; sha256: Buffer; messageId: string | null; createdByUserId: string | null; at: string; expiresAt: string | null },
): Promise<void> {
  await db
    .insertInto('participant_links')
    .values({
      workspace_id: link.workspaceId,
      link_id: link.linkId,
      participant_id: link.participantId,
      study_id: link.studyId,
      person_id: link.personId,
      purpose: link.purpose,
      token_sha256: link.sha256,
      message_id: link.messageId,
      created_by_user_id: link.createdByUserId,
      created_at: link.at,
      expires_at: link.expiresAt,
    })
    .execute();
}

/**
 * The link a token's digest names, in any workspace, before the workspace is known: through the
 * SECURITY DEFINER function participant_link_by_digest (migration 20261210000000), which answers
 * the same in every scope, so `anyScopeDb` may call it without switching the connection's scope.
 */
export async function findLinkByDigest(anyScopeDb: Kysely<DB>, sha256: Buffer): Promise<LinkRow | undefined> {
  const { rows } = await sql<LinkRow>`select * from participant_link_by_digest(${sha256})`.execute(anyScopeDb);
  return rows[0];
}

export async function deleteLink(db: Kysely<DB>, workspaceId: string, linkId: string): Promise<void> {
  await db.deleteFrom('participant_links').where('workspace_id', '=', workspaceId).where('link_id', '=', linkId).execute();
}

/** A message's earlier links (a retried message gets a new one: the token of the old is unknown once sent). */
export async function deleteLinksOfMessage(db: Kysely<DB>, workspaceId: string, messageId: string): Promise<void> {
  await db.deleteFrom('participant_links').where('workspace_id', '=', workspaceId).where('message_id', '=', messageId).execute();
}

/** Deleted people's links go with them: a link is a way into what the service holds of them. */
export async function deleteLinksOfPeople(transaction: Kysely<DB>, batch: RawBuilder<unknown>): Promise<void> {
  await sql`delete from participant_links where (workspace_id, person_id) in ${batch}`.execute(transaction);
}

export interface LinkPageFacts {
  workspaceName: string;
  studyStatus: 'DRAFT' | 'ACTIVE' | 'PAUSED' | 'CLOSED';
  studyPlan: { externalName?: string; name?: string; language?: string; externalDescription?: string; consentFormId?: string; consentBeforeScreener?: boolean; brandingConfigId?: string };
  screenerState: string;
  screenerSubmittedAt: string | null;
  participantStatus: string;
  /** The team's decision on the participant (PENDING_REVIEW, APPROVED, REJECTED): a rejected person books no session. */
  approvalStatus: string;
  personOptedOut: boolean;
  personId: string;
}

/**
 * What a page needs to know about its link's participant, in one statement that also records the
 * link's use (`last_used_at`, the funnel's "opened"): the workspace's name, the study's status and
 * plan, the participant's states, whether the person opted out. Undefined when the participant or
 * the person is gone (deleted people's links are deleted with them).
 */
export async function openLinkPage(db: Kysely<DB>, workspaceId: string, link: { linkId: string; participantId: string }, at: string): Promise<LinkPageFacts | undefined> {
  const { rows } = await sql<{
    workspace_name: string;
    status: LinkPageFacts['studyStatus'];
    plan: LinkPageFacts['studyPlan'];
    screener_state: string;
    screener_submitted_at: string | null;
    participant_status: string;
    approval_status: string;
    is_opted_out: boolean;
    person_id: string;
  }>`
    with touched as (
      update participant_links set last_used_at = ${at}::timestamptz
      where workspace_id = ${workspaceId} and link_id = ${link.linkId}
      returning link_id
    )
    select w.name as workspace_name, s.status, s.plan, pa.screener_state, pa.screener_submitted_at, pa.status as participant_status, pa.approval_status, pe.is_opted_out, pa.person_id
    from participants pa
    join studies s on s.workspace_id = pa.workspace_id and s.study_id = pa.study_id
    join people pe on pe.workspace_id = pa.workspace_id and pe.person_id = pa.person_id and pe.deleted_at is null
    join workspaces w on w.workspace_id = pa.workspace_id
    where pa.workspace_id = ${workspaceId} and pa.participant_id = ${link.participantId}
  `.execute(db);
  const row = rows[0];
  if (!row) return undefined;
  return {
    workspaceName: row.workspace_name,
    studyStatus: row.status,
    studyPlan: row.plan,
    screenerState: row.screener_state,
    screenerSubmittedAt: row.screener_submitted_at,
    participantStatus: row.participant_status,
    approvalStatus: row.approval_status,
    personOptedOut: row.is_opted_out,
    personId: row.person_id,
  };
}

/** The study's screener questions in order, with their ids (the page's field names). */
export async function findScreenerQuestions(db: Kysely<DB>, workspaceId: string, studyId: string) {
  return db
    .selectFrom('screener_questions as q')
    .innerJoin('screeners as sc', (join) => join.onRef('sc.workspace_id', '=', 'q.workspace_id').onRef('sc.screener_id', '=', 'q.screener_id'))
    .where('sc.workspace_id', '=', workspaceId)
    .where('sc.study_id', '=', studyId)
    .select(['q.question_id', 'q.name', 'q.type', 'q.description', 'q.is_required'])
    .orderBy('q.position')
    .execute();
}

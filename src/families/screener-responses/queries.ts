import { type Insertable, type Kysely, type RawBuilder, sql } from 'kysely';
import type { DB, ScreenerResponsesTable } from '../../db/schema.js';

export async function insertResponse(db: Kysely<DB>, response: Insertable<ScreenerResponsesTable>): Promise<void> {
  await db.insertInto('screener_responses').values(response).execute();
}

export async function insertAnswers(db: Kysely<DB>, workspaceId: string, participantId: string, answers: ReadonlyMap<string, unknown>, at: string): Promise<void> {
  if (answers.size === 0) return;
  await db
    .insertInto('screener_answers')
    .values([...answers].map(([questionId, value]) => ({ workspace_id: workspaceId, participant_id: participantId, question_id: questionId, value: JSON.stringify(value), answered_at: at })))
    .execute();
}

/** Deleted people's answers and submissions go at once: what they answered is theirs (their participations stay, as history). */
export async function eraseResponsesOfPeople(transaction: Kysely<DB>, batch: RawBuilder<unknown>): Promise<void> {
  await sql`
    delete from screener_answers a using participants p
    where p.workspace_id = a.workspace_id and p.participant_id = a.participant_id and (p.workspace_id, p.person_id) in ${batch}
  `.execute(transaction);
  await sql`delete from screener_responses where (workspace_id, person_id) in ${batch}`.execute(transaction);
  await sql`
    delete from screener_starts s using participants p
    where p.workspace_id = s.workspace_id and p.participant_id = s.participant_id and (p.workspace_id, p.person_id) in ${batch}
  `.execute(transaction);
}

// ---------------------------------------------------------------------------------------------
// Answers for the team: a response with its answers, a study's responses paged or exported, the funnel.

const responseColumns = [
  'r.participant_id',
  'r.study_id',
  'r.person_id',
  'r.revision',
  'r.outcome',
  'r.decided_by',
  'r.suspected_bot',
  'r.started_at',
  'r.submitted_at',
  'r.seconds_to_complete',
] as const;

export interface ResponseRow {
  participant_id: string;
  study_id: string;
  person_id: string;
  revision: number;
  /** OVER_QUOTA once quotas are merged (wt/quotas). */
  outcome: 'QUALIFIED' | 'DISQUALIFIED' | 'NEEDS_REVIEW' | 'OVER_QUOTA';
  decided_by: { kind: string } & Record<string, unknown>;
  suspected_bot: boolean;
  started_at: string | null;
  submitted_at: string;
  seconds_to_complete: number | null;
}

/** One participant's response, when the participant is the study's and has submitted. */
export async function findResponse(db: Kysely<DB>, workspaceId: string, studyId: string, participantId: string): Promise<ResponseRow | undefined> {
  return db
    .selectFrom('screener_responses as r')
    .where('r.workspace_id', '=', workspaceId)
    .where('r.study_id', '=', studyId)
    .where('r.participant_id', '=', participantId)
    .select(responseColumns)
    .executeTakeFirst() as Promise<ResponseRow | undefined>;
}

/** Whether the study has this participant (a live person's: a deleted person's participant is not found, as everywhere). */
export async function participantOfStudyExists(db: Kysely<DB>, workspaceId: string, studyId: string, participantId: string): Promise<boolean> {
  const row = await db
    .selectFrom('participants as p')
    .innerJoin('people as pe', (join) => join.onRef('pe.workspace_id', '=', 'p.workspace_id').onRef('pe.person_id', '=', 'p.person_id').on('pe.deleted_at', 'is', null))
    .where('p.workspace_id', '=', workspaceId)
    .where('p.study_id', '=', studyId)
    .where('p.participant_id', '=', participantId)
    .select(sql<number>`1`.as('one'))
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * A page of the study's responses in participant id order, after `afterParticipantId`: `size + 1`
 * rows (the extra one says a page follows), and how many match in all. Deleted people's responses
 * are erased with them, so every row is a live person's.
 */
export async function listResponses(
  db: Kysely<DB>,
  workspaceId: string,
  studyId: string,
  outcome: string | undefined,
  afterParticipantId: string | undefined,
  size: number,
  options: { count: boolean } = { count: true },
) {
  const base = db
    .selectFrom('screener_responses as r')
    .where('r.workspace_id', '=', workspaceId)
    .where('r.study_id', '=', studyId)
    .$if(outcome !== undefined, (query) => query.where(sql<boolean>`r.outcome = ${outcome!}`));
  const [rows, count] = await Promise.all([
    base
      .$if(afterParticipantId !== undefined, (query) => query.where('r.participant_id', '>', afterParticipantId!))
      .select(responseColumns)
      .orderBy('r.participant_id')
      .limit(size + 1)
      .execute(),
    options.count ? base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow() : Promise.resolve({ total: 0 }),
  ]);
  return { rows: rows as ResponseRow[], total: Number(count.total) };
}

export interface AnswerRow {
  participant_id: string;
  question_id: string;
  question_key: string;
  revision: number;
  position: number;
  type: string;
  name: string;
  choices: { id: string; label: string }[] | null;
  mapped_to_property_id: string | null;
  value: unknown;
}

/** The answers of these participants, each with the question version it answered, in revision then question order. */
export async function findAnswersOf(db: Kysely<DB>, workspaceId: string, participantIds: readonly string[]): Promise<AnswerRow[]> {
  if (participantIds.length === 0) return [];
  const rows = await db
    .selectFrom('screener_answers as a')
    .innerJoin('screener_questions as q', (join) => join.onRef('q.workspace_id', '=', 'a.workspace_id').onRef('q.question_id', '=', 'a.question_id'))
    .where('a.workspace_id', '=', workspaceId)
    .where('a.participant_id', 'in', participantIds)
    .select(['a.participant_id', 'a.question_id', 'q.question_key', 'q.revision', 'q.position', 'q.type', 'q.name', 'q.choices', 'q.mapped_to_property_id', 'a.value'])
    .orderBy('a.participant_id')
    .orderBy('q.revision')
    .orderBy('q.position')
    .execute();
  return rows as AnswerRow[];
}

/** Of these property ids, those flagged isPII or isPHI, and those the workspace no longer has (their answers are masked as personal, to be safe). */
export async function findPersonalProperties(db: Kysely<DB>, workspaceId: string, propertyIds: readonly string[]): Promise<Set<string>> {
  if (propertyIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('person_properties')
    .where('workspace_id', '=', workspaceId)
    .where('property_id', 'in', propertyIds)
    .select(['property_id', 'is_pii', 'is_phi'])
    .execute();
  const known = new Map(rows.map((row) => [row.property_id, row.is_pii || row.is_phi]));
  return new Set(propertyIds.filter((id) => known.get(id) ?? true));
}

/**
 * The CSV's question columns: one per question key the study's screener has ever had answered or
 * now asks, the current revision's first in their order, then older keys (newest revision first).
 * Each with its latest text and whether any version of it maps to a property.
 */
export async function findQuestionColumns(db: Kysely<DB>, workspaceId: string, studyId: string) {
  return db
    .selectFrom('screener_questions as q')
    .innerJoin('screeners as s', (join) => join.onRef('s.workspace_id', '=', 'q.workspace_id').onRef('s.screener_id', '=', 'q.screener_id'))
    .where('s.workspace_id', '=', workspaceId)
    .where('s.study_id', '=', studyId)
    .select(['q.question_key', 'q.name', 'q.revision', 'q.position', 's.current_revision'])
    .orderBy('q.revision', 'desc')
    .orderBy('q.position')
    .execute();
}

/** Records that the participant posted their screener's form and it was refused: the funnel's "started". The first post's time is kept. */
export async function recordScreenerStarted(db: Kysely<DB>, workspaceId: string, studyId: string, participantId: string, at: string): Promise<void> {
  await db
    .insertInto('screener_starts')
    .values({ workspace_id: workspaceId, participant_id: participantId, study_id: studyId, started_at: at })
    .onConflict((conflict) => conflict.columns(['workspace_id', 'participant_id']).doNothing())
    .execute();
}

export interface FunnelRow {
  participants: number;
  sent: number;
  opened: number;
  started: number;
  submitted: number;
  qualified: number;
  disqualified: number;
  needs_review: number;
  over_quota: number;
}

/**
 * The study's funnel in one statement over its participants (live people only: a deleted
 * person's responses and links are erased with them, so counting their participation would make
 * a stage larger than the one after it for no reason a team can see).
 */
export async function countFunnel(db: Kysely<DB>, workspaceId: string, studyId: string): Promise<FunnelRow> {
  const result = await sql<FunnelRow>`
    select
      count(*) as participants,
      count(*) filter (where p.screener_sent_at is not null) as sent,
      count(*) filter (where exists (
        select 1 from participant_links l
        where l.workspace_id = p.workspace_id and l.participant_id = p.participant_id and l.purpose = 'SCREENER' and l.last_used_at is not null
      )) as opened,
      count(*) filter (where r.participant_id is not null or exists (
        select 1 from screener_starts st where st.workspace_id = p.workspace_id and st.participant_id = p.participant_id
      )) as started,
      count(r.participant_id) as submitted,
      count(*) filter (where r.outcome = 'QUALIFIED') as qualified,
      count(*) filter (where r.outcome = 'DISQUALIFIED') as disqualified,
      count(*) filter (where r.outcome = 'NEEDS_REVIEW') as needs_review,
      count(*) filter (where r.outcome = 'OVER_QUOTA') as over_quota
    from participants p
    join people pe on pe.workspace_id = p.workspace_id and pe.person_id = p.person_id and pe.deleted_at is null
    left join screener_responses r on r.workspace_id = p.workspace_id and r.participant_id = p.participant_id
    where p.workspace_id = ${workspaceId} and p.study_id = ${studyId}
  `.execute(db);
  const row = result.rows[0]!;
  return Object.fromEntries(Object.entries(row).map(([key, value]) => [key, Number(value)])) as unknown as FunnelRow;
}

/** The study's participants per quota group (live people), by group name. */
export async function countQuotaGroups(db: Kysely<DB>, workspaceId: string, studyId: string): Promise<{ name: string; participants: number }[]> {
  const result = await sql<{ quota_group: string; participants: string | number }>`
    select p.quota_group, count(*) as participants
    from participants p
    join people pe on pe.workspace_id = p.workspace_id and pe.person_id = p.person_id and pe.deleted_at is null
    where p.workspace_id = ${workspaceId} and p.study_id = ${studyId} and p.quota_group is not null
    group by p.quota_group
    order by p.quota_group
  `.execute(db);
  return result.rows.map((row) => ({ name: row.quota_group, participants: Number(row.participants) }));
}

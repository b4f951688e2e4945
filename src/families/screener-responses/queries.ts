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
}

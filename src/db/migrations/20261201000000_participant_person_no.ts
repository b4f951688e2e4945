import { type Kysely, sql } from 'kysely';

/**
 * Each participant carries its person's `person_no` (people.person_no never changes once given),
 * filled in by the database on insert whoever inserts, so no writer can forget it.
 *
 * Why: a search page read in its count's snapshot (src/search/run.ts) may walk a study's
 * participants in the sort's order and keep those whose person the count matched. Read from the
 * person, that test cost a probe into people for every participant walked: E1's SCHEDULED
 * participants by session time passed 18,098 earlier sessions before the first match, 140 ms for
 * a 25-row page at 1,000,000 people. On the participant row it costs nothing more than the walk.
 *
 * The backfill rewrites every participant once; the change log's triggers are held off for it,
 * because no name a search reads changes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table participants add column person_no integer;
    alter table participants disable trigger participants_search_log_update;
    update participants as pt set person_no = p.person_no
      from people as p where p.workspace_id = pt.workspace_id and p.person_id = pt.person_id;
    alter table participants enable trigger participants_search_log_update;
    alter table participants alter column person_no set not null;

    create function participants_person_no() returns trigger language plpgsql as $$
    begin
      select p.person_no into new.person_no from people as p where p.workspace_id = new.workspace_id and p.person_id = new.person_id;
      return new;
    end
    $$;
    create trigger participants_person_no before insert on participants
      for each row execute function participants_person_no();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop trigger participants_person_no on participants;
    drop function participants_person_no();
    alter table participants drop column person_no;
  `.execute(db);
}

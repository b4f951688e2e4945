import { type Kysely, sql } from 'kysely';

/**
 * Screeners people can answer (issue 33, item 1): choices, rules, skip logic and versioned questions.
 *
 * - Question rows are immutable versions. Each PUT of a screener writes a new revision: new rows
 *   with `revision` = the screener's new `current_revision`; the screener shows only its current
 *   revision's rows. An answer names the row it answered (`question_id`), so it keeps the question
 *   as it was asked (its text, choices and rules) whatever later PUTs do. Rows of an older
 *   revision that no answer names are pruned by the PUT that supersedes them, so a draft edited a
 *   hundred times keeps one set.
 * - `question_key` is the question's identity across revisions (client-chosen, or generated):
 *   skip logic names the earlier question by it, and the team's answer views will group the
 *   versions of one question by it. Unique within a revision.
 * - `choices` (select and yes/no questions): `[{id, label, rule}]`, the id stable across revisions.
 *   `number_rules` (NUMBER and SCALE questions): `{minimum, maximum, integer, ranges:[{min, max, rule}]}`.
 *   `show_when`: `{questionKey, choiceIds}` or `{questionKey, range:{min, max}}`. JSON because they
 *   are read and written whole with their question and never filtered on.
 * - `screener_answers` is the minimal answer row the submission flow (a later part of issue 33)
 *   writes and extends: one value per participant and question version. Its foreign key to the
 *   question version has no cascade: a question that was answered cannot disappear under its
 *   answer. A participant's answers go with the participant.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table screeners add column current_revision integer not null default 1;

    alter table screener_questions
      add column revision integer not null default 1,
      add column question_key text,
      add column choices jsonb,
      add column number_rules jsonb,
      add column show_when jsonb;
    update screener_questions set question_key = question_id;
    alter table screener_questions alter column question_key set not null;

    drop index screener_questions_in_order;
    create unique index screener_questions_in_order on screener_questions (workspace_id, screener_id, revision, position);
    create unique index screener_questions_key_unique on screener_questions (workspace_id, screener_id, revision, question_key);

    create table screener_answers (
      workspace_id text not null,
      participant_id text not null,
      question_id text not null,
      value jsonb not null,
      answered_at timestamptz not null,
      primary key (workspace_id, participant_id, question_id),
      foreign key (workspace_id, participant_id) references participants on delete cascade,
      foreign key (workspace_id, question_id) references screener_questions
    );
    create index screener_answers_by_question on screener_answers (workspace_id, question_id);
  `.execute(db);
  await sql`
    do $$
    declare
      tenant_table text;
    begin
      foreach tenant_table in array array['screener_answers'] loop
        execute format('alter table %I enable row level security', tenant_table);
        execute format(
          'create policy tenant_isolation on %I using (workspace_id = current_setting(%L, true)) with check (workspace_id = current_setting(%L, true))',
          tenant_table, 'app.workspace_id', 'app.workspace_id');
      end loop;
    end
    $$;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table screener_answers;
    delete from screener_questions q using screeners s
      where s.workspace_id = q.workspace_id and s.screener_id = q.screener_id and q.revision <> s.current_revision;
    drop index screener_questions_key_unique;
    drop index screener_questions_in_order;
    create index screener_questions_in_order on screener_questions (workspace_id, screener_id, position);
    alter table screener_questions
      drop column show_when,
      drop column number_rules,
      drop column choices,
      drop column question_key,
      drop column revision;
    alter table screeners drop column current_revision;
  `.execute(db);
}

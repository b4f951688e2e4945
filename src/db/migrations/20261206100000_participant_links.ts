import { type Kysely, sql } from 'kysely';

/**
 * The links a participant follows to the pages that face them (src/participant/): a screener, a
 * consent to sign, a withdrawal. A link carries a random token of 256 bits; only its SHA-256 is
 * kept (`token_sha256`), so the table cannot be turned back into working links. Each row is bound
 * to one participant (and through it one person and one study) and one purpose, and expires
 * (`expires_at`; null: when the purpose says, e.g. a screener link when its study closes).
 * `message_id` names the message that carried it, when one did: a message retried after a failed
 * attempt gets a new link and its earlier one goes.
 *
 * The token is looked up before the workspace is known (the owner's handle); everything after is
 * the workspace's, under row-level security like every tenant table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table participant_links (
      workspace_id text not null,
      link_id text not null,
      participant_id text not null,
      study_id text not null,
      person_id text not null,
      purpose text not null check (purpose in ('SCREENER', 'CONSENT', 'WITHDRAWAL')),
      token_sha256 bytea not null check (length(token_sha256) = 32),
      message_id text,
      created_by_user_id text,
      created_at timestamptz not null,
      expires_at timestamptz,
      last_used_at timestamptz,
      primary key (workspace_id, link_id),
      foreign key (workspace_id, participant_id) references participants on delete cascade
    );
    create unique index participant_links_by_token on participant_links (token_sha256);
    create index participant_links_of_participant on participant_links (workspace_id, participant_id, purpose);
    create index participant_links_of_message on participant_links (workspace_id, message_id) where message_id is not null;
    create index participant_links_of_person on participant_links (workspace_id, person_id);
  `.execute(db);
  await sql`
    do $$
    begin
      execute format('alter table %I enable row level security', 'participant_links');
      execute format(
        'create policy tenant_isolation on %I using (workspace_id = current_setting(%L, true)) with check (workspace_id = current_setting(%L, true))',
        'participant_links', 'app.workspace_id', 'app.workspace_id');
    end
    $$;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table participant_links`.execute(db);
}

import { type Kysely, sql } from 'kysely';

/**
 * A page of the person's own (issue 34, item 6): the person signs in with a link emailed to them
 * and reads, downloads and changes what the service holds about them.
 *
 * - person_access_links: a sign-in link, its token's SHA-256 only (the token itself is in the
 *   email alone), bound to one workspace and one person, valid 15 minutes, spent once (used_at
 *   set by one conditional update).
 * - person_sessions: a signed-in person's session, its cookie token's SHA-256 only, with its idle
 *   clock (last_seen_at) and its hard end (expires_at); ended_at when they sign out or are erased.
 * - person_properties.editable_by_person: the workspace lets the person change this value themselves.
 * - participants.messages_stopped_at: the person asked for no more messages about this study
 *   (the messages family skips them as it skips the opted-out).
 *
 * No personal data in the new tables: ids, digests and times.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table person_access_links (
      workspace_id text not null,
      link_id text not null,
      person_id text not null,
      token_sha256 bytea not null,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      used_at timestamptz,
      primary key (workspace_id, link_id),
      foreign key (workspace_id, person_id) references people on delete cascade
    );
    create unique index person_access_links_token on person_access_links (token_sha256);
    create index person_access_links_of_person on person_access_links (workspace_id, person_id);
    create table person_sessions (
      workspace_id text not null,
      session_id text not null,
      person_id text not null,
      token_sha256 bytea not null,
      created_at timestamptz not null,
      last_seen_at timestamptz not null,
      expires_at timestamptz not null,
      ended_at timestamptz,
      primary key (workspace_id, session_id),
      foreign key (workspace_id, person_id) references people on delete cascade
    );
    create unique index person_sessions_token on person_sessions (token_sha256);
    create index person_sessions_of_person on person_sessions (workspace_id, person_id);
    alter table person_properties add column editable_by_person boolean not null default false;
    alter table participants add column messages_stopped_at timestamptz;
  `.execute(db);
  for (const table of ['person_access_links', 'person_sessions']) {
    await sql`
      do $$
      begin
        execute format('alter table %I enable row level security', ${sql.lit(table)});
        execute format(
          'create policy tenant_isolation on %I using (workspace_id = current_setting(%L, true)) with check (workspace_id = current_setting(%L, true))',
          ${sql.lit(table)}, 'app.workspace_id', 'app.workspace_id');
      end
      $$;
    `.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table person_sessions;
    drop table person_access_links;
    alter table person_properties drop column editable_by_person;
    alter table participants drop column messages_stopped_at;
  `.execute(db);
}

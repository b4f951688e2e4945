import { type Kysely, sql } from 'kysely';

/**
 * A team signs in (issue 36, item 2): invitations, emailed sign-in links, passwords and console
 * sessions of workspace users.
 *
 * - user_sign_in_links: a link emailed to a user, its token's SHA-256 only (the token is in the
 *   email alone): INVITATION (valid 7 days; accepting it makes the user ACTIVE) or SIGN_IN (valid
 *   15 minutes). Spent once, by one conditional update of used_at.
 * - user_sessions: a console session, its cookie secret's SHA-256 only, with its idle clock
 *   (last_seen_at) and its hard end (expires_at); ended_at at sign-out.
 * - user_passwords: a user's password as an argon2id PHC string (salt and parameters inside).
 *
 * No personal data in the new tables: ids, digests, hashes and times.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table user_sign_in_links (
      workspace_id text not null,
      link_id text not null,
      user_id text not null,
      purpose text not null check (purpose in ('INVITATION', 'SIGN_IN')),
      token_sha256 bytea not null,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      used_at timestamptz,
      primary key (workspace_id, link_id),
      foreign key (workspace_id, user_id) references users on delete cascade
    );
    create unique index user_sign_in_links_token on user_sign_in_links (token_sha256);
    create index user_sign_in_links_of_user on user_sign_in_links (workspace_id, user_id);
    create table user_sessions (
      workspace_id text not null,
      session_id text not null,
      user_id text not null,
      method text not null check (method in ('INVITATION', 'LINK', 'PASSWORD', 'OIDC')),
      token_sha256 bytea not null,
      created_at timestamptz not null,
      last_seen_at timestamptz not null,
      expires_at timestamptz not null,
      ended_at timestamptz,
      primary key (workspace_id, session_id),
      foreign key (workspace_id, user_id) references users on delete cascade
    );
    create unique index user_sessions_token on user_sessions (token_sha256);
    create index user_sessions_of_user on user_sessions (workspace_id, user_id) where ended_at is null;
    create table user_passwords (
      workspace_id text not null,
      user_id text not null,
      password_hash text not null,
      updated_at timestamptz not null,
      primary key (workspace_id, user_id),
      foreign key (workspace_id, user_id) references users on delete cascade
    );
  `.execute(db);
  await sql`
    do $$
    declare t text;
    begin
      foreach t in array array['user_sign_in_links', 'user_sessions', 'user_passwords'] loop
        execute format('alter table %I enable row level security', t);
        execute format(
          'create policy tenant_isolation on %I using (workspace_id = current_setting(%L, true)) with check (workspace_id = current_setting(%L, true))',
          t, 'app.workspace_id', 'app.workspace_id');
      end loop;
    end
    $$;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table user_passwords;
    drop table user_sessions;
    drop table user_sign_in_links;
  `.execute(db);
}

import { type Kysely, sql } from 'kysely';
import { idPrefixes, newId } from '../../ids.js';

/**
 * A team administers itself (issue 36, accounts):
 *
 * - custom_roles: a workspace's own roles, each a set of the API's rights a SUPER_ADMIN chose
 *   (names unique case-insensitively). A user of role CUSTOM holds exactly one
 *   (users.custom_role_id); a user of any other role none. A role held by users cannot be
 *   deleted (the foreign key, besides the service's 409).
 * - api_tokens gains what self-service keys need: a name, the rights the key is limited to (null:
 *   all of its user's, as CLI-made tokens always were), an expiry and when it was last used.
 *
 * CUSTOM users made before this migration acted as OBSERVER: each workspace that has any gets a
 * custom role "Read only (before custom roles)" holding the read rights they had, so nothing they
 * could do changes.
 */
const previousCustomRights = [
  'studies:read',
  'users:read',
  'people:read',
  'properties:read',
  'populations:read',
  'participants:read',
  'incentives:read',
  'signups:read',
  'consent:read',
  'consent-forms:read',
  'branding:read',
  'events:read',
  'messages:read',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table custom_roles (
      workspace_id text not null references workspaces,
      custom_role_id text not null,
      name text not null,
      rights text[] not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      primary key (workspace_id, custom_role_id)
    );
    create unique index custom_roles_name_unique on custom_roles (workspace_id, lower(name));
    alter table users add column custom_role_id text;
    alter table users add constraint users_custom_role foreign key (workspace_id, custom_role_id) references custom_roles (workspace_id, custom_role_id);
    create index users_by_custom_role on users (workspace_id, custom_role_id) where custom_role_id is not null;
    alter table api_tokens add column name text not null default '';
    alter table api_tokens add column rights text[];
    alter table api_tokens add column expires_at timestamptz;
    alter table api_tokens add column last_used_at timestamptz;
    create index api_tokens_by_user on api_tokens (workspace_id, user_id, token_id);
  `.execute(db);
  const workspaces = await sql<{ workspace_id: string }>`select distinct workspace_id from users where role = 'CUSTOM'`.execute(db);
  for (const { workspace_id: workspaceId } of workspaces.rows) {
    const roleId = newId(idPrefixes.customRole);
    await sql`
      insert into custom_roles (workspace_id, custom_role_id, name, rights, created_at, updated_at)
      values (${workspaceId}, ${roleId}, 'Read only (before custom roles)', ${previousCustomRights}, now(), now())
    `.execute(db);
    await sql`update users set custom_role_id = ${roleId} where workspace_id = ${workspaceId} and role = 'CUSTOM'`.execute(db);
  }
  await sql`
    alter table users add constraint users_custom_role_with_role check ((role = 'CUSTOM') = (custom_role_id is not null));
    alter table custom_roles enable row level security;
    create policy tenant_isolation on custom_roles using (workspace_id = current_setting('app.workspace_id', true)) with check (workspace_id = current_setting('app.workspace_id', true));
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop index api_tokens_by_user;
    alter table api_tokens drop column last_used_at;
    alter table api_tokens drop column expires_at;
    alter table api_tokens drop column rights;
    alter table api_tokens drop column name;
    alter table users drop constraint users_custom_role_with_role;
    drop index users_by_custom_role;
    alter table users drop constraint users_custom_role;
    alter table users drop column custom_role_id;
    drop table custom_roles;
  `.execute(db);
}

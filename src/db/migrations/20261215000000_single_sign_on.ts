import { type Kysely, sql } from 'kysely';

/**
 * Single sign-on with OpenID Connect (issue 36, item 2).
 *
 * - sso_settings: a workspace's identity provider (issuer, client id, the client secret sealed
 *   under the service's secret key), the email domains whose people become members at their first
 *   sign-in (just-in-time membership) and the role they get.
 * - sso_sign_in_attempts: a sign-in sent to the provider and not yet back: found by the SHA-256 of
 *   a secret held in the browser's cookie, with the state, nonce and PKCE verifier the answer must
 *   match; spent once, valid 10 minutes.
 * - user_sso_identities: which user a provider's subject is, so a later sign-in finds the user by
 *   the subject (stable) rather than by the address (which may change).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table sso_settings (
      workspace_id text primary key,
      issuer text not null,
      client_id text not null,
      client_secret_sealed text,
      jit_domains text[] not null default '{}',
      jit_role text not null check (jit_role in ('DEVELOPER', 'OBSERVER', 'RESEARCHER', 'OPS_MANAGER', 'COLLABORATOR')),
      enabled boolean not null,
      version integer not null,
      updated_by_user_id text,
      updated_at timestamptz not null
    );
    create table sso_sign_in_attempts (
      workspace_id text not null,
      attempt_id text not null,
      flow_sha256 bytea not null,
      settings_version integer not null,
      state text not null,
      nonce text not null,
      code_verifier text not null,
      redirect_uri text not null,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      primary key (workspace_id, attempt_id)
    );
    create unique index sso_sign_in_attempts_flow on sso_sign_in_attempts (flow_sha256);
    create index sso_sign_in_attempts_expiry on sso_sign_in_attempts (workspace_id, expires_at);
    create table user_sso_identities (
      workspace_id text not null,
      issuer text not null,
      subject text not null,
      user_id text not null,
      created_at timestamptz not null,
      primary key (workspace_id, issuer, subject),
      foreign key (workspace_id, user_id) references users on delete cascade
    );
    create index user_sso_identities_of_user on user_sso_identities (workspace_id, user_id);
  `.execute(db);
  await sql`
    do $$
    declare t text;
    begin
      foreach t in array array['sso_settings', 'sso_sign_in_attempts', 'user_sso_identities'] loop
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
    drop table user_sso_identities;
    drop table sso_sign_in_attempts;
    drop table sso_settings;
  `.execute(db);
}

import { type Kysely, sql } from 'kysely';

/**
 * Paying through a real provider, per workspace (issue 35).
 *
 * - incentive_provider_accounts: a workspace's account at a provider: its credentials sealed
 *   with AES-256-GCM under a key derived from SECRETS_KEY (`credentials_key_id` names that key,
 *   so a rotation can tell which rows still need sealing again), the names of the credentials
 *   given (so the API can say which are set without opening them), the environment (SANDBOX or
 *   PRODUCTION: the service, never the workspace, maps it to a base URL), and `version`, bumped
 *   on every change, which every instance's adapter cache is keyed by. At most one account per
 *   workspace is `selected` (new incentives are ordered from it); the others stay, so that
 *   incentives already ordered from them can still be resent, voided and reconciled.
 * - provider_webhook_receipts: the event ids of provider webhooks already applied, one per
 *   workspace, provider and event: a redelivery (or a replay of a captured request) is
 *   acknowledged and not applied again.
 * - incentives.provider_checked_at: when the reconciliation last asked the provider about an
 *   open order, so that it asks about each at most once per interval.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table incentive_provider_accounts (
      workspace_id text not null,
      provider text not null check (provider ~ '^[a-z][a-z0-9_-]{0,31}$'),
      environment text not null check (environment in ('SANDBOX', 'PRODUCTION')),
      credentials_ciphertext text not null,
      credentials_key_id text not null,
      credential_names text[] not null,
      version integer not null check (version > 0),
      selected boolean not null,
      updated_by_user_id text,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      primary key (workspace_id, provider)
    );
    create unique index incentive_provider_accounts_selected on incentive_provider_accounts (workspace_id) where selected;
    create table provider_webhook_receipts (
      workspace_id text not null,
      provider text not null,
      event_id text not null,
      incentive_id text,
      received_at timestamptz not null,
      primary key (workspace_id, provider, event_id)
    );
    alter table incentives add column provider_checked_at timestamptz;
    create index incentives_by_provider_reference on incentives (workspace_id, provider, provider_reference) where provider_reference is not null;
    create index incentives_open_orders on incentives (workspace_id, sent_at) where status = 'UNCLAIMED' and provider_state = 'ORDERED';
  `.execute(db);
  await sql`
    do $$
    declare t text;
    begin
      foreach t in array array['incentive_provider_accounts', 'provider_webhook_receipts'] loop
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
    drop index incentives_open_orders;
    drop index incentives_by_provider_reference;
    alter table incentives drop column provider_checked_at;
    drop table provider_webhook_receipts;
    drop table incentive_provider_accounts;
  `.execute(db);
}

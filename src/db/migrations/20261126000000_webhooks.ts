import { type Kysely, sql } from 'kysely';

/**
 * Webhooks: endpoints a workspace registers, the outbox of events (webhook_messages), one
 * delivery per (endpoint, message) and every attempt made.
 *
 * - webhook_messages is the outbox: a row is written in the transaction of the change it reports,
 *   so a change that rolls back leaves none and one that commits cannot lose it. Messages are kept
 *   30 days (the replay window) whether or not an endpoint listens.
 * - webhook_deliveries is written in that same transaction, one row per enabled endpoint
 *   subscribed to the message's type. A delivery is PENDING until an attempt succeeds
 *   (SUCCEEDED) or the retry schedule is spent (FAILED). `next_attempt_at` is when it is due; a
 *   dispatcher that claims it moves that time past its lease first, so a claim is one statement, a
 *   second instance cannot claim it meanwhile, and a claim whose process died comes due again.
 * - `trigger` is MANUAL for a delivery re-sent or replayed by hand; its attempts say so.
 * - Secrets are encrypted (AES-256-GCM, src/families/webhooks/secrets.ts): HMAC signing needs the
 *   secret itself, so it cannot be hashed. A rotated-out secret stays beside the new one for 24 h.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table webhook_endpoints (
      workspace_id text not null references workspaces,
      endpoint_id text not null,
      url text not null,
      description text not null default '',
      event_types text[] not null,
      enabled boolean not null default true,
      disabled_reason text,
      secret_ciphertext text not null,
      previous_secret_ciphertext text,
      previous_secret_expires_at timestamptz,
      failing_since timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      primary key (workspace_id, endpoint_id)
    )
  `.execute(db);
  await sql`
    create table webhook_messages (
      workspace_id text not null references workspaces,
      message_id text not null,
      event_type text not null,
      occurred_at timestamptz not null,
      payload jsonb not null,
      primary key (workspace_id, message_id)
    )
  `.execute(db);
  await sql`create index webhook_messages_by_time on webhook_messages (workspace_id, occurred_at, message_id)`.execute(db);
  await sql`
    create table webhook_deliveries (
      workspace_id text not null,
      endpoint_id text not null,
      message_id text not null,
      state text not null check (state in ('PENDING', 'SUCCEEDED', 'FAILED')),
      attempt_count integer not null default 0 check (attempt_count >= 0),
      trigger text not null default 'SCHEDULED' check (trigger in ('SCHEDULED', 'MANUAL')),
      next_attempt_at timestamptz,
      created_at timestamptz not null,
      last_attempt_at timestamptz,
      primary key (workspace_id, endpoint_id, message_id),
      foreign key (workspace_id, endpoint_id) references webhook_endpoints (workspace_id, endpoint_id) on delete cascade,
      foreign key (workspace_id, message_id) references webhook_messages (workspace_id, message_id) on delete cascade,
      check ((state = 'PENDING') = (next_attempt_at is not null))
    )
  `.execute(db);
  // The dispatcher's claim: per endpoint, its due deliveries oldest first.
  await sql`create index webhook_deliveries_due on webhook_deliveries (workspace_id, endpoint_id, next_attempt_at) where state = 'PENDING'`.execute(db);
  await sql`create index webhook_deliveries_by_message on webhook_deliveries (workspace_id, message_id)`.execute(db);
  await sql`
    create table webhook_attempts (
      workspace_id text not null,
      attempt_id text not null,
      endpoint_id text not null,
      message_id text not null,
      trigger text not null check (trigger in ('SCHEDULED', 'MANUAL', 'TEST')),
      attempted_at timestamptz not null,
      duration_ms integer not null check (duration_ms >= 0),
      succeeded boolean not null,
      response_status integer,
      response_body text,
      error text,
      primary key (workspace_id, attempt_id),
      foreign key (workspace_id, endpoint_id) references webhook_endpoints (workspace_id, endpoint_id) on delete cascade,
      foreign key (workspace_id, message_id) references webhook_messages (workspace_id, message_id) on delete cascade
    )
  `.execute(db);
  await sql`create index webhook_attempts_by_endpoint on webhook_attempts (workspace_id, endpoint_id, attempt_id)`.execute(db);
  await sql`create index webhook_attempts_by_message on webhook_attempts (workspace_id, message_id)`.execute(db);
  await sql`
    do $$
    declare
      tenant_table text;
    begin
      foreach tenant_table in array array['webhook_endpoints', 'webhook_messages', 'webhook_deliveries', 'webhook_attempts'] loop
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
  await sql`drop table webhook_attempts, webhook_deliveries, webhook_messages, webhook_endpoints`.execute(db);
}

import { type Kysely, sql } from 'kysely';

/**
 * Incentives (payments to participants) and the idempotency keys of POST requests.
 *
 * An incentive's `status` is the reference's (UNCLAIMED, CLAIMED, CANCELED, ERROR, SENT,
 * EXPIRED). Provider-backed incentives (MONEY_OR_GIFT_CARD, PROVIDER_ONE_MONEY) also carry where
 * the money stands at the provider, `provider_state`:
 * - PENDING: recorded here, the order not confirmed by the provider yet (being placed, or its
 *   outcome unknown after a timeout); background work re-orders with the incentive id as the
 *   provider's idempotency key until it is ORDERED or FAILED;
 * - ORDERED: the provider confirmed the order (`provider_reference`);
 * - FAILED: the provider refused the order, or never confirmed it and the order was voided
 *   (status ERROR);
 * - VOIDING: a cancel asked the provider to void the order, not confirmed yet (retried the same way);
 * - VOIDED: the provider confirmed the void (status CANCELED).
 * CUSTOM and RECRUITMENT_FEE incentives are paid outside any provider: provider and
 * provider_state are null, and they start SENT.
 *
 * `idempotency_key` is the Idempotency-Key of the POST that sent the incentive, unique per
 * workspace, with the request's fingerprint: a re-execution of the same request after its
 * reservation in idempotency_keys was lost finds this row instead of paying again.
 *
 * Partial indexes hold exactly what the background sweeps read: unclaimed incentives (expiry) and
 * those with a provider call to retry.
 *
 * idempotency_keys: one row per (workspace, key) for at least 24 hours. While the first request
 * runs, `lease_token` and `locked_until` mark it in flight (a crashed instance's lease lapses);
 * afterwards the stored response (status, content type, body) is replayed to retries.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table incentives (
      workspace_id text not null,
      incentive_id text not null,
      study_id text not null,
      participant_id text not null,
      person_id text not null,
      type text not null check (type in ('MONEY_OR_GIFT_CARD', 'PROVIDER_ONE_MONEY', 'RECRUITMENT_FEE', 'CUSTOM')),
      amount_cents integer not null check (amount_cents > 0),
      currency text not null default 'USD' check (currency = 'USD'),
      status text not null check (status in ('UNCLAIMED', 'CLAIMED', 'CANCELED', 'ERROR', 'SENT', 'EXPIRED')),
      budget_id text,
      custom_incentive_id text,
      custom_incentive_value text,
      provider text,
      provider_state text check (provider_state in ('PENDING', 'ORDERED', 'FAILED', 'VOIDING', 'VOIDED')),
      provider_reference text,
      provider_attempts integer not null default 0 check (provider_attempts >= 0),
      provider_next_attempt_at timestamptz,
      idempotency_key text,
      idempotency_fingerprint text,
      sent_by_user_id text not null,
      sent_at timestamptz not null,
      claimed_at timestamptz,
      canceled_at timestamptz,
      failed_at timestamptz,
      expired_at timestamptz,
      failure_reason text,
      resend_count integer not null default 0 check (resend_count >= 0),
      last_resent_at timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      primary key (workspace_id, incentive_id),
      check ((provider is null) = (type in ('RECRUITMENT_FEE', 'CUSTOM'))),
      check ((provider is null) = (provider_state is null)),
      check ((provider_state in ('PENDING', 'VOIDING')) = (provider_next_attempt_at is not null)),
      check ((idempotency_key is null) = (idempotency_fingerprint is null)),
      check (status not in ('UNCLAIMED', 'CLAIMED') or provider is not null),
      check (status <> 'SENT' or provider is null),
      foreign key (workspace_id, participant_id) references participants,
      foreign key (workspace_id, study_id) references studies,
      foreign key (workspace_id, person_id) references people
    );
    create unique index incentives_idempotency_key on incentives (workspace_id, idempotency_key) where idempotency_key is not null;
    create index incentives_of_participant on incentives (workspace_id, participant_id, sent_at);
    create index incentives_of_person on incentives (workspace_id, person_id, sent_at);
    create index incentives_of_study on incentives (workspace_id, study_id, incentive_id);
    create index incentives_unclaimed on incentives (workspace_id, sent_at) where status = 'UNCLAIMED';
    create index incentives_provider_due on incentives (workspace_id, provider_next_attempt_at) where provider_state in ('PENDING', 'VOIDING');

    create table idempotency_keys (
      workspace_id text not null references workspaces on delete cascade,
      idempotency_key text not null,
      fingerprint text not null,
      lease_token text,
      locked_until timestamptz,
      response_status integer,
      response_content_type text,
      response_body text,
      created_at timestamptz not null,
      completed_at timestamptz,
      primary key (workspace_id, idempotency_key),
      check ((lease_token is null) = (locked_until is null)),
      check ((lease_token is null) = (response_status is not null)),
      check ((response_status is null) = (completed_at is null))
    );
    create index idempotency_keys_by_age on idempotency_keys (workspace_id, created_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table idempotency_keys;
    drop table incentives;
  `.execute(db);
}

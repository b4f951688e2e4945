import { type Kysely, sql } from 'kysely';

/**
 * Paying people for real (issue 35, items 3 to 5): currencies, budgets, approvals and the ledger.
 *
 * - incentives.currency: any ISO 4217 code (the service accepts those of currencies.ts); the
 *   amount stays in `amount_cents`, read as the currency's minor unit (JPY has none, BHD three).
 * - incentive_budgets: per workspace, in one currency; `spent_minor` is what the incentives that
 *   hold the budget add up to, raised by a conditional update (`spent + amount <= limit`) in the
 *   transaction that records the incentive, so concurrent sends never overspend, and lowered once
 *   when such an incentive ends unpaid (CANCELED, ERROR, EXPIRED, refused): `budget_held` on the
 *   incentive says it still holds its amount, and is cleared in the same statement set.
 * - approvals: an incentive above the workspace's threshold for its currency
 *   (incentive_approval_thresholds) waits for a second person: `approval_state` PENDING while
 *   its order waits (`provider_state` AWAITING_APPROVAL: no provider call is due), then APPROVED
 *   (ordered), REFUSED or WITHDRAWN (canceled before a decision; both never ordered: NOT_ORDERED).
 * - incentive_ledger: append-only, one row per money event with who or what did it. A trigger
 *   refuses every update and delete but the erasure of a deleted person's values
 *   (recipient_email, note set to null): the row is the team's bookkeeping and outlives them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table incentives drop constraint incentives_currency_check;
    alter table incentives add constraint incentives_currency_check check (currency ~ '^[A-Z]{3}$');
    alter table incentives drop constraint incentives_provider_state_check;
    alter table incentives add constraint incentives_provider_state_check
      check (provider_state in ('PENDING', 'ORDERED', 'FAILED', 'VOIDING', 'VOIDED', 'AWAITING_APPROVAL', 'NOT_ORDERED'));
    alter table incentives add column budget_held boolean not null default false;
    alter table incentives add column approval_state text check (approval_state in ('PENDING', 'APPROVED', 'REFUSED', 'WITHDRAWN'));
    alter table incentives add column approval_decided_by_user_id text;
    alter table incentives add column approval_decided_at timestamptz;
    alter table incentives add column approval_reason text;
    alter table incentives add constraint incentives_awaiting_approval check ((provider_state = 'AWAITING_APPROVAL') = (approval_state is not distinct from 'PENDING'));
    alter table incentives add constraint incentives_held_budget check (not budget_held or budget_id is not null);
    create index incentives_awaiting_approval on incentives (workspace_id, incentive_id) where approval_state = 'PENDING';

    create table incentive_budgets (
      workspace_id text not null references workspaces on delete cascade,
      budget_id text not null,
      name text not null,
      currency text not null check (currency ~ '^[A-Z]{3}$'),
      limit_minor integer not null check (limit_minor >= 0),
      spent_minor integer not null default 0 check (spent_minor >= 0),
      archived_at timestamptz,
      created_by_user_id text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      primary key (workspace_id, budget_id),
      check (spent_minor <= limit_minor)
    );
    alter table incentive_budgets enable row level security;
    create policy tenant_isolation on incentive_budgets using (workspace_id = current_setting('app.workspace_id', true)) with check (workspace_id = current_setting('app.workspace_id', true));

    create table incentive_approval_thresholds (
      workspace_id text not null references workspaces on delete cascade,
      currency text not null check (currency ~ '^[A-Z]{3}$'),
      threshold_minor integer not null check (threshold_minor >= 0),
      updated_by_user_id text not null,
      updated_at timestamptz not null,
      primary key (workspace_id, currency)
    );
    alter table incentive_approval_thresholds enable row level security;
    create policy tenant_isolation on incentive_approval_thresholds using (workspace_id = current_setting('app.workspace_id', true)) with check (workspace_id = current_setting('app.workspace_id', true));

    create table incentive_ledger (
      workspace_id text not null,
      entry_id text not null,
      incentive_id text not null,
      kind text not null,
      amount_minor integer not null,
      currency text not null,
      study_id text not null,
      participant_id text not null,
      person_id text not null,
      budget_id text,
      status text not null,
      actor_kind text not null check (actor_kind in ('USER', 'JOB', 'PROVIDER')),
      actor_id text not null,
      token_id text,
      recipient_email text,
      note text,
      at timestamptz not null,
      primary key (workspace_id, entry_id),
      foreign key (workspace_id, incentive_id) references incentives
    );
    create index incentive_ledger_of_incentive on incentive_ledger (workspace_id, incentive_id, entry_id);
    create index incentive_ledger_of_person on incentive_ledger (workspace_id, person_id);
    create index incentive_ledger_by_time on incentive_ledger (workspace_id, at, entry_id);
    alter table incentive_ledger enable row level security;
    create policy tenant_isolation on incentive_ledger using (workspace_id = current_setting('app.workspace_id', true)) with check (workspace_id = current_setting('app.workspace_id', true));

    create function incentive_ledger_append_only() returns trigger language plpgsql as $$
    begin
      if tg_op = 'UPDATE'
        and (new.recipient_email is null and new.note is null)
        and (to_jsonb(new) - 'recipient_email' - 'note') = (to_jsonb(old) - 'recipient_email' - 'note') then
        return new;
      end if;
      raise exception 'incentive_ledger is append-only: only a deleted person''s values may be erased' using errcode = '55000';
    end $$;
    create trigger incentive_ledger_append_only before update or delete on incentive_ledger
      for each row execute function incentive_ledger_append_only();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table incentive_ledger;
    drop function incentive_ledger_append_only();
    drop table incentive_approval_thresholds;
    drop table incentive_budgets;
    drop index incentives_awaiting_approval;
    alter table incentives drop constraint incentives_held_budget;
    alter table incentives drop constraint incentives_awaiting_approval;
    alter table incentives drop column approval_reason;
    alter table incentives drop column approval_decided_at;
    alter table incentives drop column approval_decided_by_user_id;
    alter table incentives drop column approval_state;
    alter table incentives drop column budget_held;
    delete from incentives where provider_state in ('AWAITING_APPROVAL', 'NOT_ORDERED') or currency <> 'USD';
    alter table incentives drop constraint incentives_provider_state_check;
    alter table incentives add constraint incentives_provider_state_check check (provider_state in ('PENDING', 'ORDERED', 'FAILED', 'VOIDING', 'VOIDED'));
    alter table incentives drop constraint incentives_currency_check;
    alter table incentives add constraint incentives_currency_check check (currency = 'USD');
  `.execute(db);
}

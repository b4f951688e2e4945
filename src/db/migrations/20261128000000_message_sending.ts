import { type Kysely, sql } from 'kysely';

/**
 * Sending messages (issue 11): `messages` is both the record of every message and the mail
 * outbox. A row is written in the transaction of the request that sends it (a send to a study's
 * participants, or a participant's move to INVITED or SCREENER_SENT), so a request that rolls back
 * sends nothing and one that commits cannot lose its message.
 *
 * - QUEUED rows are due at `next_attempt_at`. A dispatcher that claims one moves that time past
 *   its lease in the same statement (FOR UPDATE SKIP LOCKED), so one claim is one statement, a second
 *   instance cannot claim it meanwhile, and a claim whose process died comes due again.
 * - SENT, FAILED (a permanent SMTP refusal, or the retry schedule spent) and NOT_SENT (never handed
 *   to SMTP: SMTP not configured, or the person opted out, was deleted or became unreachable
 *   before the send) are final.
 * - The message is rendered when it is sent, and what was sent (recipient, subject, bodies) is
 *   kept on the row: the record says exactly what reached the person.
 * - `counts_as_contact` is false for a message sent as part of a participant's move: the move is
 *   already the contact (a participant status event with is_contact), the message is not a second one.
 * - message_events: each attempt's outcome and the unsubscribe, the message's history.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table messages (
      workspace_id text not null references workspaces,
      message_id text not null,
      person_id text not null,
      study_id text,
      participant_id text,
      template_id text not null,
      template_name text not null,
      origin text not null check (origin in ('SEND', 'INVITED', 'SCREENER_SENT')),
      counts_as_contact boolean not null,
      status text not null check (status in ('QUEUED', 'SENT', 'FAILED', 'NOT_SENT')),
      not_sent_reason text,
      attempt_count integer not null default 0 check (attempt_count >= 0),
      next_attempt_at timestamptz,
      last_attempt_at timestamptz,
      last_error text,
      last_smtp_code integer,
      queued_at timestamptz not null,
      sent_at timestamptz,
      failed_at timestamptz,
      unsubscribed_at timestamptz,
      recipient_email text,
      subject text,
      text_body text,
      html_body text,
      smtp_message_id text,
      created_by_user_id text not null,
      primary key (workspace_id, message_id),
      foreign key (workspace_id, person_id) references people (workspace_id, person_id),
      check ((status = 'QUEUED') = (next_attempt_at is not null))
    )
  `.execute(db);
  // The dispatchers' claim: per workspace, its due messages oldest first (partial: only QUEUED rows, so finding the workspaces with due messages reads the queue alone).
  await sql`create index messages_due on messages (workspace_id, next_attempt_at) where status = 'QUEUED'`.execute(db);
  // The per-workspace sending rate: attempts started in the last minute.
  await sql`create index messages_by_attempt on messages (workspace_id, last_attempt_at) where last_attempt_at is not null`.execute(db);
  await sql`create index messages_by_person on messages (workspace_id, person_id, message_id)`.execute(db);
  await sql`create index messages_by_study on messages (workspace_id, study_id, message_id)`.execute(db);
  await sql`
    create table message_events (
      workspace_id text not null,
      event_id text not null,
      message_id text not null,
      occurred_at timestamptz not null,
      type text not null check (type in ('SENT', 'RETRYING', 'FAILED', 'NOT_SENT', 'UNSUBSCRIBED')),
      smtp_code integer,
      detail text,
      primary key (workspace_id, event_id),
      foreign key (workspace_id, message_id) references messages (workspace_id, message_id) on delete cascade
    )
  `.execute(db);
  await sql`create index message_events_by_message on message_events (workspace_id, message_id, event_id)`.execute(db);
  await sql`
    do $$
    declare
      tenant_table text;
    begin
      foreach tenant_table in array array['messages', 'message_events'] loop
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
  await sql`drop table message_events, messages`.execute(db);
}

import { type Kysely, sql } from 'kysely';

/**
 * Session reminders (issue 34, item 5): before each booked session, at its study's
 * reminder_offsets_minutes, a message to the person, through the messages outbox.
 *
 * - session_reminders: one row per (booking, sequence, offset) the sweep has decided on, written
 *   with `on conflict do nothing` in the transaction that queues its message, so each reminder is
 *   queued once however many sweeps run at once. A move raises the booking's sequence: the new
 *   time has keys of its own. A row names the message it queued, or why none was (the person may
 *   not be sent to, or the booking was made or moved after the reminder's time).
 * - messages: a reminder is a message the service writes from its own catalogue (origin
 *   REMINDER), so it has no template and no user who requested it.
 * - sessions_by_start: the sweep finds due reminders by the session's start, across workspaces,
 *   one narrow range per distinct offset (see reminders-queries.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table messages alter column template_id drop not null;
    alter table messages alter column created_by_user_id drop not null;
    alter table messages drop constraint messages_origin_check;
    alter table messages add constraint messages_origin_check check (origin in ('SEND', 'INVITED', 'SCREENER_SENT', 'REMINDER'));
    alter table messages add constraint messages_template_of_origin check ((template_id is null) = (origin = 'REMINDER'));
    create table session_reminders (
      workspace_id text not null,
      booking_id text not null,
      sequence integer not null,
      offset_minutes integer not null,
      due_at timestamptz not null,
      message_id text,
      skip_reason text check (skip_reason in ('OPTED_OUT', 'DELETED', 'UNREACHABLE', 'NO_EMAIL', 'BOOKED_AFTER_DUE')),
      created_at timestamptz not null,
      primary key (workspace_id, booking_id, sequence, offset_minutes),
      check ((message_id is null) <> (skip_reason is null)),
      foreign key (workspace_id, booking_id) references bookings on delete cascade,
      foreign key (workspace_id, message_id) references messages (workspace_id, message_id) deferrable initially deferred
    );
    create unique index session_reminders_of_message on session_reminders (workspace_id, message_id) where message_id is not null;
    create index sessions_by_start on sessions (starts_at) where booked > 0;
    alter table session_reminders enable row level security;
    create policy tenant_isolation on session_reminders using (workspace_id = current_setting('app.workspace_id', true)) with check (workspace_id = current_setting('app.workspace_id', true));
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop index sessions_by_start;
    drop table session_reminders;
    delete from message_events e using messages m where e.workspace_id = m.workspace_id and e.message_id = m.message_id and m.origin = 'REMINDER';
    delete from participant_links l using messages m where l.workspace_id = m.workspace_id and l.message_id = m.message_id and m.origin = 'REMINDER';
    delete from messages where origin = 'REMINDER';
    alter table messages drop constraint messages_template_of_origin;
    alter table messages drop constraint messages_origin_check;
    alter table messages add constraint messages_origin_check check (origin in ('SEND', 'INVITED', 'SCREENER_SENT'));
    alter table messages alter column created_by_user_id set not null;
    alter table messages alter column template_id set not null;
  `.execute(db);
}

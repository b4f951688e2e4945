import { type Kysely, sql } from 'kysely';

/**
 * Deletion erases at once (issue 32): DELETE /people/{id} nulls the person's personal values in
 * the transaction that deletes them (src/families/people/erasure.ts), so a deleted person's row
 * may hold no email before the purge marks it purged. The hourly purge then vacuums the old row
 * versions away.
 *
 * Messages' `last_error` and events' `detail` now hold a fixed vocabulary (the SMTP answer and
 * a template's rendering error go to the log): texts written before, which may quote an address,
 * become "The attempt failed".
 */
const vocabulary = [
  'The template could not be rendered for this recipient',
  "The recipient's mail server refused the address",
  'The mail server refused the message',
  'The mail server could not be reached, or asked to try again later',
  "The mail server refused the service's SMTP credentials",
  'The attempt failed',
  'The person followed the unsubscribe link and is opted out',
  'SMTP_NOT_CONFIGURED',
  'OPTED_OUT',
  'DELETED',
  'UNREACHABLE',
  'NO_EMAIL',
  'TEMPLATE_DELETED',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    do $$
    declare
      name text;
    begin
      select conname into name from pg_constraint
      where conrelid = 'people'::regclass and contype = 'c' and pg_get_constraintdef(oid) like '%purged_at IS NOT NULL%';
      if name is not null then
        execute format('alter table people drop constraint %I', name);
      end if;
    end
    $$
  `.execute(db);
  await sql`alter table people add constraint people_email_unless_deleted check (email is not null or deleted_at is not null)`.execute(db);
  const known = sql`${vocabulary}::text[]`;
  await sql`
    update messages set last_error = 'The attempt failed'
    where last_error is not null and not (regexp_replace(last_error, ' \\(no attempts left: [0-9]+ made\\)$', '') = any(${known}))
  `.execute(db);
  await sql`
    update message_events set detail = 'The attempt failed'
    where detail is not null and not (regexp_replace(detail, ' \\(no attempts left: [0-9]+ made\\)$', '') = any(${known}))
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table people drop constraint people_email_unless_deleted`.execute(db);
  await sql`alter table people add constraint people_check check (email is not null or purged_at is not null)`.execute(db);
}

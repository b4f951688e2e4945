import { type Kysely, sql } from 'kysely';

/**
 * Calendar invitations and a host's calendar feeds (issue 34, "Calendar invitations").
 *
 * - booking_notifications: which invitation (the booking's sequence and method) has gone to
 *   which recipient (the person, the host). The booking.notify job reads it before a send and
 *   writes it after, so a retried job (SMTP 4xx for one of the two) sends only what is missing,
 *   as consent_submissions.copy_sent_at does for a signed copy. No personal data: the address a
 *   message went to is the person's or the host's of the day, read again when needed.
 * - calendar_feeds: a workspace user's subscribable calendar of the sessions they host. The URL's
 *   token is a bearer secret (32 random bytes); only its SHA-256 is kept, looked up across
 *   workspaces by that digest alone (the URL carries no workspace), as participant links are.
 *   A revoked feed keeps its row (revoked_at) so that its token never opens anything again.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table booking_notifications (
      workspace_id text not null,
      booking_id text not null,
      sequence integer not null,
      method text not null check (method in ('REQUEST', 'CANCEL')),
      recipient text not null check (recipient in ('PERSON', 'HOST')),
      sent_at timestamptz not null,
      smtp_message_id text,
      link_id text,
      primary key (workspace_id, booking_id, sequence, method, recipient),
      foreign key (workspace_id, booking_id) references bookings on delete cascade
    );
    create table calendar_feeds (
      workspace_id text not null,
      feed_id text not null,
      user_id text not null,
      token_sha256 bytea not null check (octet_length(token_sha256) = 32),
      created_at timestamptz not null,
      revoked_at timestamptz,
      last_used_at timestamptz,
      primary key (workspace_id, feed_id),
      foreign key (workspace_id, user_id) references users
    );
    create unique index calendar_feeds_by_token on calendar_feeds (token_sha256);
    create index calendar_feeds_of_user on calendar_feeds (workspace_id, user_id, feed_id) where revoked_at is null;
  `.execute(db);
  await sql`
    do $$
    declare t text;
    begin
      foreach t in array array['booking_notifications', 'calendar_feeds'] loop
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
  await sql`drop table calendar_feeds; drop table booking_notifications;`.execute(db);
}

import { type Kysely, sql } from 'kysely';

/**
 * Segments: saved people filters ("engineers in the UK who took no interview this quarter").
 * Membership is dynamic: a person belongs to a segment while they match its filter, evaluated
 * at search time by the service clock, so SEGMENT_MEMBERSHIP needs no stored members.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table segments (
      workspace_id text not null references workspaces,
      segment_id text not null,
      name text not null,
      description text not null default '',
      filter jsonb not null,
      -- The filter reads personal data (emails, names, phones, isPII/isPHI properties): membership
      -- then answers who holds such values, so only tokens with the personal-data right may use it.
      uses_personal_data boolean not null,
      created_by_user_id text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      primary key (workspace_id, segment_id)
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table segments`.execute(db);
}

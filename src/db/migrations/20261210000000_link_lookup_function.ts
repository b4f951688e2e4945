import { type Kysely, sql } from 'kysely';

/**
 * A participant link's token is looked up before its workspace is known. Through the owner's
 * handle that cost two round trips more per page on a busy pool: the connection taken was switched
 * back to the owner for the lookup, and to the workspace again for the page. This function answers
 * the lookup as the tables' owner (SECURITY DEFINER) whatever role and workspace the calling
 * connection is in, so the page's connections stay in the workspace they served last
 * (Database.anyScope, src/db/tenancy.ts). It answers one row for one digest, and only the columns
 * the page needs to open the workspace's own handle; the tenant role may call it, nobody else.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function participant_link_by_digest(digest bytea)
    returns table (workspace_id text, link_id text, participant_id text, study_id text, person_id text, purpose text, created_at timestamptz, expires_at timestamptz)
    language sql stable security definer
    set search_path = pg_catalog, public
    as $$
      select l.workspace_id, l.link_id, l.participant_id, l.study_id, l.person_id, l.purpose, l.created_at, l.expires_at
      from public.participant_links l
      where l.token_sha256 = digest
    $$;
    revoke all on function participant_link_by_digest(bytea) from public;
    grant execute on function participant_link_by_digest(bytea) to recruit_tenant;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop function participant_link_by_digest(bytea)`.execute(db);
}

import { type Kysely, sql } from 'kysely';

/**
 * The consent form a signup form presents (null: it presents none). A public submission records
 * a consent only to this form, so an anonymous sender cannot name an arbitrary consentFormId.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table signup_forms add column consent_form_id text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table signup_forms drop column consent_form_id`.execute(db);
}

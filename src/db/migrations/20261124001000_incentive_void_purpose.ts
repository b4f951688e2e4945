import { type Kysely, sql } from 'kysely';

/**
 * Why an incentive's order is being voided (provider_state VOIDING) or was voided (VOIDED):
 * - CANCEL: E17 canceled it; once the provider confirms, the incentive is CANCELED;
 * - EXPIRE: it stayed UNCLAIMED for a year; once the provider confirms, it is EXPIRED. Expiry
 *   goes through the provider so that an incentive never reads EXPIRED while the provider still
 *   holds an order the recipient could claim.
 * Null in every other provider state. Orders voided before this migration were all canceled.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table incentives add column void_purpose text check (void_purpose in ('CANCEL', 'EXPIRE'));
    update incentives set void_purpose = 'CANCEL' where provider_state in ('VOIDING', 'VOIDED');
    alter table incentives add constraint incentives_void_purpose_with_state
      check (coalesce(provider_state in ('VOIDING', 'VOIDED'), false) = (void_purpose is not null));
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table incentives drop column void_purpose`.execute(db);
}

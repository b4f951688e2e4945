import { type Kysely, sql } from 'kysely';

/**
 * A CUSTOM incentive is a thing (a gift, a voucher code), not necessarily money: it may be sent
 * without an amount, and its amount_cents is then 0 (the reference's Incentive has a number there,
 * never null). Every other incentive still carries an amount greater than 0. Sums of money sent
 * (TOTAL_SENT_*, INCENTIVE_PAID) add the 0 and are unchanged by such an incentive.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table incentives drop constraint incentives_amount_cents_check;
    alter table incentives add constraint incentives_amount_cents_check
      check (amount_cents > 0 or (amount_cents = 0 and type = 'CUSTOM'));
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table incentives drop constraint incentives_amount_cents_check;
    alter table incentives add constraint incentives_amount_cents_check check (amount_cents > 0) not valid;
  `.execute(db);
}

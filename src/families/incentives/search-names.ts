import { sql } from 'kysely';
import type { PropertyDefinition } from '../../search/catalogue.js';
import { supportedCurrencies } from './currencies.js';
import { incentiveStatuses, incentiveTypes } from './states.js';
import { enumOptions, named } from '../../search/sql.js';

/**
 * The incentive statuses whose money counts as sent: ordered from a provider and not (yet)
 * claimed, claimed, or a custom incentive marked sent. CANCELED, ERROR and EXPIRED ones paid nothing.
 */
export const paidIncentiveStatuses = ['UNCLAIMED', 'CLAIMED', 'SENT'] as const;

/**
 * `x.status in (…paid statuses)`, for an incentives row aliased `x`, in USD: the sums of money sent
 * (TOTAL_SENT_*, INCENTIVE_PAID) are numbers in the reference's cents, and sums never mix
 * currencies, so incentives in other currencies are not added (search them with CURRENCY and AMOUNT).
 */
export const paidIncentive = sql`x.status in (${sql.join(paidIncentiveStatuses.map((status) => sql.lit(status)))}) and x.currency = 'USD'`;

/**
 * The INCENTIVE names, as SQL over `incentives as i`: the incentive searched (POST /incentives/search),
 * or, in a search of participants or signup submissions, the participant's (person's) most recent
 * incentive, empty when there is none.
 */

const incentive = named('INCENTIVE');

const column = (name: string) => () => sql.ref(`i.${name}`);

export const incentiveNames: Record<string, PropertyDefinition> = {
  // The recipient's email: the person's, while they are not deleted.
  EMAIL: incentive('EMAIL', 'email', "the recipient's email (empty once the recipient is deleted)", () => sql`(case when i.incentive_id is not null then p.email end)`, { personalData: true }),
  TYPE: incentive('TYPE', 'enum', 'the incentive type', column('type'), { options: enumOptions(incentiveTypes) }),
  AMOUNT: incentive('AMOUNT', 'number', "the amount, in the minor unit of the incentive's own currency (cents for USD, yen for JPY): compare within one currency by adding a CURRENCY condition", column('amount_cents')),
  CURRENCY: incentive('CURRENCY', 'enum', 'the ISO 4217 code of the incentive\'s currency', column('currency'), { options: enumOptions(supportedCurrencies) }),
  STATUS: incentive('STATUS', 'enum', 'the incentive status', column('status'), { options: enumOptions(incentiveStatuses) }),
  STUDY: incentive('STUDY', 'text', 'the id of the study the incentive was sent for', column('study_id')),
  SENDER: incentive('SENDER', 'text', 'the id of the user who sent the incentive', column('sent_by_user_id')),
  SENT_AT: incentive('SENT_AT', 'datetime', 'when the incentive was sent', column('sent_at')),
  INCENTIVE_BUDGET: incentive('INCENTIVE_BUDGET', 'text', 'the budget id the incentive was paid from', column('budget_id')),
  CUSTOM_INCENTIVE: incentive('CUSTOM_INCENTIVE', 'text', 'the custom incentive id', column('custom_incentive_id')),
  CUSTOM_INCENTIVE_VALUE: incentive('CUSTOM_INCENTIVE_VALUE', 'text', 'the custom incentive value', column('custom_incentive_value')),
};

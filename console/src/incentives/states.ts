/**
 * Which incentive actions to offer, from what the Incentive record shows (the server's full rules,
 * src/families/incentives/states.ts, also read the provider's state, which the API does not
 * show: the API's refusal is then shown beside the row). Cancel (E17) and resend (E16) are
 * allowed only while the incentive's study is a DRAFT, the reference's rule.
 */

export type IncentiveType = 'MONEY_OR_GIFT_CARD' | 'PROVIDER_ONE_MONEY' | 'RECRUITMENT_FEE' | 'CUSTOM';
export type IncentiveStatus = 'UNCLAIMED' | 'CLAIMED' | 'CANCELED' | 'ERROR' | 'SENT' | 'EXPIRED';

export const incentiveTypes: readonly IncentiveType[] = ['MONEY_OR_GIFT_CARD', 'PROVIDER_ONE_MONEY', 'RECRUITMENT_FEE', 'CUSTOM'];

export const typeLabels: Record<IncentiveType, string> = {
  MONEY_OR_GIFT_CARD: 'Money or gift card (through the provider)',
  PROVIDER_ONE_MONEY: 'Provider One payout (through the provider)',
  RECRUITMENT_FEE: 'Recruitment fee (paid outside the service)',
  CUSTOM: 'Custom reward (handed over outside the service)',
};

export const isProviderBacked = (type: string | null) => type === 'MONEY_OR_GIFT_CARD' || type === 'PROVIDER_ONE_MONEY';

/** An UNCLAIMED (provider-backed) or SENT (custom, fee) incentive can be canceled, while its study is a draft. */
export function mayCancel(incentive: { status: IncentiveStatus }, studyStatus: string): boolean {
  return studyStatus === 'DRAFT' && (incentive.status === 'UNCLAIMED' || incentive.status === 'SENT');
}

/** A provider-backed incentive waiting to be claimed can have its claim email sent again, while its study is a draft. */
export function mayResend(incentive: { type: string | null; status: IncentiveStatus; approval?: { state: string } | null }, studyStatus: string): boolean {
  // Waiting for approval reads UNCLAIMED but nothing was ordered: nothing to resend.
  return studyStatus === 'DRAFT' && isProviderBacked(incentive.type) && incentive.status === 'UNCLAIMED' && incentive.approval?.state !== 'PENDING';
}

import type { IncentiveStatus, IncentiveType, ProviderState, VoidPurpose } from '../../db/schema.js';

/**
 * Incentive types and states: the reference's state table, with the service's own provider
 * states beneath it. Every value carries the sentence the OpenAPI description shows.
 */

export const incentiveTypes = ['MONEY_OR_GIFT_CARD', 'PROVIDER_ONE_MONEY', 'RECRUITMENT_FEE', 'CUSTOM'] as const satisfies readonly IncentiveType[];
export const incentiveStatuses = ['UNCLAIMED', 'CLAIMED', 'CANCELED', 'ERROR', 'SENT', 'EXPIRED'] as const satisfies readonly IncentiveStatus[];
export const providerStates = ['PENDING', 'ORDERED', 'FAILED', 'VOIDING', 'VOIDED', 'AWAITING_APPROVAL', 'NOT_ORDERED'] as const satisfies readonly ProviderState[];

export type ProviderBackedType = 'MONEY_OR_GIFT_CARD' | 'PROVIDER_ONE_MONEY';

/** Money that moves through a provider: ordered there, claimed by the recipient, voided on cancel. */
export function isProviderBacked(type: IncentiveType): type is ProviderBackedType {
  return type === 'MONEY_OR_GIFT_CARD' || type === 'PROVIDER_ONE_MONEY';
}

export const typeMeaning: Record<IncentiveType, string> = {
  MONEY_OR_GIFT_CARD: 'money or a gift card, paid through the incentive provider; starts UNCLAIMED',
  PROVIDER_ONE_MONEY: "money paid through PROVIDER_ONE's payout, ordered through the incentive provider; starts UNCLAIMED",
  RECRUITMENT_FEE: 'a fee paid outside the service (no claim flow): recorded as paid, like CUSTOM; starts SENT',
  CUSTOM: "the workspace's own reward (customIncentiveId, customIncentiveValue), handed over outside the service; starts SENT",
};

export const statusMeaning: Record<IncentiveStatus, string> = {
  UNCLAIMED: 'provider-backed: sent, waiting for the recipient to claim it',
  CLAIMED: 'provider-backed: the recipient claimed it (reported by the provider)',
  CANCELED: 'canceled (provider-backed incentives are voided at the provider first)',
  ERROR: 'provider-backed: the provider refused the order or reported a failure',
  SENT: 'CUSTOM and RECRUITMENT_FEE: recorded as paid; they have no claim flow',
  EXPIRED:
    'provider-backed, sent after 2026-01-31 and unclaimed for one year; its order is voided at the provider first (it stays UNCLAIMED until the provider confirms), so an expired incentive can never be paid',
};

/** Incentives sent before this instant never expire (the reference: "sent after 31 Jan 2026"). */
export const EXPIRY_APPLIES_FROM = '2026-02-01T00:00:00.000Z';
/** Years an incentive may stay UNCLAIMED before it expires. */
export const EXPIRY_YEARS = 1;

/** The latest send time at which an UNCLAIMED incentive has expired by `now`: `now` minus one calendar year. */
export function expiryCutoff(now: Date): Date {
  const cutoff = new Date(now.getTime());
  cutoff.setUTCFullYear(cutoff.getUTCFullYear() - EXPIRY_YEARS);
  return cutoff;
}

const finalStatusRefusal: Partial<Record<IncentiveStatus, string>> = {
  CLAIMED: 'Incentive was already claimed',
  CANCELED: 'Incentive is already canceled',
  EXPIRED: 'Incentive has expired',
  ERROR: 'Incentive failed at the provider',
};

export interface TransitionSubject {
  type: IncentiveType;
  status: IncentiveStatus;
  provider_state: ProviderState | null;
  void_purpose: VoidPurpose | null;
}

const EXPIRING = 'Incentive is expiring: its order is being voided at the provider';

/** An UNCLAIMED incentive past its year whose order the provider has not confirmed voided yet. */
const isExpiring = (incentive: TransitionSubject) => incentive.provider_state === 'VOIDING' && incentive.void_purpose === 'EXPIRE';

/**
 * Why E17 cannot cancel this incentive, or undefined when it can: UNCLAIMED (provider-backed,
 * voided at the provider) or SENT (CUSTOM, RECRUITMENT_FEE). An order whose outcome is not known
 * yet cannot be voided safely (the void could overtake the order), so it waits.
 */
export function cancelRefusal(incentive: TransitionSubject): string | undefined {
  if (incentive.status === 'SENT') return undefined;
  if (incentive.status !== 'UNCLAIMED') return finalStatusRefusal[incentive.status] ?? `Incentive is ${incentive.status}`;
  if (incentive.provider_state === 'PENDING') return 'Incentive is still being ordered at the provider; retry in a minute';
  if (isExpiring(incentive)) return EXPIRING;
  return undefined;
}

/**
 * Why E16 cannot resend this incentive, or undefined when it can: provider-backed, not canceled,
 * not expired (the reference's rule), and with an order at the provider to resend.
 */
export function resendRefusal(incentive: TransitionSubject): string | undefined {
  if (!isProviderBacked(incentive.type)) return 'Only provider-backed incentives (MONEY_OR_GIFT_CARD, PROVIDER_ONE_MONEY) can be resent';
  if (incentive.status === 'CANCELED') return 'Incentive is canceled';
  if (incentive.status === 'EXPIRED') return 'Incentive has expired';
  switch (incentive.provider_state) {
    case 'AWAITING_APPROVAL':
      return 'Incentive is waiting for approval: nothing was ordered yet';
    case 'PENDING':
      return 'Incentive is still being ordered at the provider; retry in a minute';
    case 'FAILED':
      return 'The provider refused the order: there is nothing to resend';
    case 'VOIDING':
      return isExpiring(incentive) ? EXPIRING : 'Incentive is being canceled';
    case 'VOIDED':
      // The service's own record decides: a provider need not remember a void (the sandbox does not).
      return 'The order was voided at the provider: there is nothing to resend';
    default:
      return undefined;
  }
}

/**
 * Why a provider's report cannot apply, or undefined when it moves the incentive (from UNCLAIMED)
 * or repeats what is already so (providers deliver reports more than once). An incentive becomes
 * EXPIRED (or CANCELED) only once the provider confirmed the void, so a provider that still
 * reports a claim afterwards contradicts itself: that is refused. A claim that arrives while the
 * void is pending wins (the recipient was paid): the incentive becomes CLAIMED.
 */
export function reportRefusal(incentive: TransitionSubject, kind: 'claimed' | 'failed'): string | undefined {
  if (!isProviderBacked(incentive.type)) return `${incentive.type} incentives have no provider to report on them`;
  if (incentive.provider_state === 'AWAITING_APPROVAL' || incentive.provider_state === 'NOT_ORDERED') return 'Incentive was never ordered at the provider';
  const target: IncentiveStatus = kind === 'claimed' ? 'CLAIMED' : 'ERROR';
  if (incentive.status === 'UNCLAIMED' || incentive.status === target) return undefined;
  return `Incentive is ${incentive.status}: it cannot become ${target}`;
}

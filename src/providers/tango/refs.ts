import { idPrefixes } from '../../ids.js';
import { ProviderRefusal } from '../provider.js';

/** Reward statuses that mean the recipient has the money (RewardStatus webhook statuses; see webhook.ts). */
export const TANGO_CLAIMED_REWARD_STATUSES: ReadonlySet<string> = new Set(['PARTIAL_REDEMPTION', 'FULL_REDEMPTION', 'FULL-REDEMPTION', 'REDEEMED', 'ACTIVATED']);
/**
 * Tango's externalRefID is "a maximum of 100 alphanumeric characters": the incentive id without
 * its underscore (`inc_01H…` → `inc01H…`). Reversible, so a webhook's externalRefID names the incentive.
 */
export function tangoExternalRefId(incentiveId: string): string {
  const ref = incentiveId.replace(/[^A-Za-z0-9]/g, '');
  if (ref.length === 0 || ref.length > 100) throw new ProviderRefusal(`Incentive id ${incentiveId} cannot be a Tango externalRefID (1-100 letters and digits)`);
  return ref;
}

/** The incentive an externalRefID stands for, or null when it is not one of this service's. */
export function incentiveIdFromTangoRef(externalRefId: string): string | null {
  const prefix = idPrefixes.incentive;
  if (!externalRefId.startsWith(prefix)) return null;
  const rest = externalRefId.slice(prefix.length);
  return /^[0-9A-HJKMNP-TV-Z]{26}$/.test(rest) ? `${prefix}_${rest}` : null;
}


import type { IncomingHttpHeaders } from 'node:http';
import type { ServiceDeps } from '../../context.js';
import { ApiError } from '../../http/errors.js';
import { type ProviderName, ProviderWebhookRejected, type ProviderWebhookEvent } from '../../providers/index.js';
import { recordProviderReport } from '../incentives/service.js';

export type WebhookOutcome =
  | { kind: 'applied'; incentiveId: string | null }
  /** Seen before (a redelivery or a replay): acknowledged, not applied again. */
  | { kind: 'repeated' }
  | { kind: 'rejected' }
  | { kind: 'failed'; error: unknown };

/**
 * Verifies one provider webhook with the workspace's secret and applies what it reports, once:
 * the event id is recorded first (unique per workspace and provider), so a second delivery of the
 * same event (the provider's retry, or a captured request replayed) finds it and changes nothing.
 * If applying fails, the record is removed again and the provider's retry applies it later.
 */
export async function receiveProviderWebhook(
  deps: Pick<ServiceDeps, 'db' | 'clock' | 'providers'>,
  delivery: { provider: ProviderName; workspaceId: string; headers: IncomingHttpHeaders; rawBody: Buffer },
): Promise<WebhookOutcome> {
  const { db, clock, providers } = deps;
  const { provider, workspaceId } = delivery;
  const accounts = providers.accounts;
  const secret = accounts ? await accounts.webhookSecret(db, workspaceId, provider).catch(() => undefined) : undefined;
  if (!secret) return { kind: 'rejected' };
  let event: ProviderWebhookEvent;
  try {
    const adapter = await providers.adapter(db, workspaceId, provider);
    if (!adapter.readWebhook) return { kind: 'rejected' };
    event = adapter.readWebhook({ headers: delivery.headers, rawBody: delivery.rawBody, secret, now: clock.now() });
  } catch (error) {
    if (error instanceof ProviderWebhookRejected) return { kind: 'rejected' };
    return { kind: 'failed', error };
  }

  const report = event.report;
  let incentiveId = report?.incentiveId ?? null;
  if (report && incentiveId === null && report.reference) {
    const found = await db
      .selectFrom('incentives')
      .select('incentive_id')
      .where('workspace_id', '=', workspaceId)
      .where('provider', '=', provider)
      .where('provider_reference', '=', report.reference)
      .executeTakeFirst();
    incentiveId = found?.incentive_id ?? null;
  }
  const receivedAt = clock.now().toISOString();
  const inserted = await db
    .insertInto('provider_webhook_receipts')
    .values({ workspace_id: workspaceId, provider, event_id: event.eventId.slice(0, 200), incentive_id: incentiveId, received_at: receivedAt })
    .onConflict((conflict) => conflict.doNothing())
    .returning('event_id')
    .executeTakeFirst();
  if (!inserted) return { kind: 'repeated' };
  // Nothing to apply: an event the service does not act on, or an order it does not hold (the
  // reconciliation asks the provider about every open order in any case).
  if (!report || incentiveId === null) return { kind: 'applied', incentiveId };
  try {
    await recordProviderReport(db, clock, { workspaceId, incentiveId, kind: report.kind, ...(report.reason ? { reason: report.reason } : {}), ...(report.reference ? { reference: report.reference } : {}) });
  } catch (error) {
    // A report that contradicts the incentive's state (a delivery report of one canceled since) is
    // the provider's word about an incentive already settled: acknowledged, nothing changes.
    if (error instanceof ApiError && error.code === 'CONFLICT') return { kind: 'applied', incentiveId };
    await db
      .deleteFrom('provider_webhook_receipts')
      .where('workspace_id', '=', workspaceId)
      .where('provider', '=', provider)
      .where('event_id', '=', event.eventId.slice(0, 200))
      .execute();
    return { kind: 'failed', error };
  }
  return { kind: 'applied', incentiveId };
}

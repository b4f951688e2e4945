import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { attributeWrite } from '../../http/audit-actor.js';
import type { ServiceDeps } from '../../context.js';
import { ApiError, sendError } from '../../http/errors.js';
import { isProviderName } from '../../providers/index.js';
import { receiveProviderWebhook } from './service.js';

/** A provider's webhook body is small (one event); anything larger is refused before it is read whole. */
export const PROVIDER_WEBHOOK_BODY_MAX = 64 * 1024;

const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * POST /v1/provider-webhooks/{provider}/{workspaceId}: what a payout provider reports (a reward
 * delivered, a delivery bounced). Public (the provider has no token of ours): the provider's
 * signature over the exact bytes, checked with the workspace's webhook secret, is the proof.
 * The bytes are kept as they came (a parser of this route's own), the body's size is capped,
 * and each address has a budget. An unknown provider, an unknown workspace, a workspace without
 * an account there, and a bad signature are all answered the same 401, so the route tells a
 * prober nothing about which workspaces exist.
 */
export const providerWebhookRoutes: FastifyPluginAsync<{ deps: ServiceDeps }> = async (app, { deps }) => {
  const perAddress = deps.limiter.withBudget({ name: 'provider-webhook-address', max: deps.config.participantRateLimitMax });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: PROVIDER_WEBHOOK_BODY_MAX }, (_request, body, done) => done(null, body));

  const refuse = (reply: FastifyReply) => sendError(reply, new ApiError('UNAUTHORIZED'));

  app.post<{ Params: { provider: string; workspaceId: string } }>(
    '/provider-webhooks/:provider/:workspaceId',
    // acceptsForm: the route reads its body itself (the raw bytes the signature is over).
    { config: { public: true, acceptsForm: true }, schema: { hide: true } },
    async (request, reply) => {
      const decision = await perAddress.consume(`address:${request.ip}`);
      if (!decision.allowed) {
        reply.header('Retry-After', decision.retryAfterSeconds);
        return sendError(reply, new ApiError('TOO_MANY_REQUESTS'));
      }
      const { provider, workspaceId } = request.params;
      const rawBody = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      if (!isProviderName(provider) || !ID_PATTERN.test(workspaceId)) return refuse(reply);
      const outcome = await receiveProviderWebhook(deps, { provider, workspaceId, headers: request.headers, rawBody });
      if (outcome.kind === 'rejected') {
        request.log.warn({ provider, workspaceId }, 'provider webhook refused: no account, or its signature does not hold');
        return refuse(reply);
      }
      if (outcome.kind === 'failed') {
        // Not recorded as received: the provider sends it again.
        request.log.error({ err: outcome.error, provider, workspaceId }, 'provider webhook could not be applied');
        return sendError(reply, new ApiError('INTERNAL'));
      }
      // The provider's report, as the service's own change of the incentive it names (the audit trail).
      attributeWrite(request, { workspaceId, actor: { kind: 'SERVICE', service: `provider-webhook:${provider}` }, ...(outcome.kind === 'applied' && outcome.incentiveId !== null ? { resourceType: 'incentive', resourceId: outcome.incentiveId } : {}) });
      return reply.code(200).send({ received: true });
    },
  );
};

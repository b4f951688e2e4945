import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { requestContext, type ServiceDeps } from '../../context.js';
import { errorResponse } from '../../http/schemas.js';
import { PutIncentiveProviderBody } from './schemas.js';
import * as service from './service.js';

const tags = ['Incentive provider'];

/** The workspace's incentive provider and its credentials: SUPER_ADMIN alone (it decides where the money goes). */
export const incentiveProviderRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  const context = (request: FastifyRequest): service.ProviderSettingContext => {
    const call = requestContext(deps, request);
    return {
      db: call.db,
      clock: call.clock,
      workspaceId: call.workspaceId,
      userId: call.userId,
      providers: deps.providers,
      publicUrl: deps.config.publicUrl ?? `${request.protocol}://${request.host}`,
    };
  };

  app.get(
    '/incentive-provider',
    {
      config: { right: 'incentive-providers:manage' },
      schema: {
        operationId: 'getIncentiveProvider',
        summary: "Read the workspace's incentive provider",
        description: 'The provider new incentives are ordered from, which credentials are stored (names only: values are never answered), and the URL to give the provider for its webhooks.',
        tags,
        response: { 200: Type.Ref('IncentiveProviderSetting') },
      },
    },
    async (request) => service.getSetting(context(request)),
  );

  app.put(
    '/incentive-provider',
    {
      config: { right: 'incentive-providers:manage' },
      schema: {
        operationId: 'putIncentiveProvider',
        summary: "Set the workspace's incentive provider",
        description:
          'Names the provider new incentives are ordered from, its environment (SANDBOX or PRODUCTION) and its credentials, stored encrypted. Incentives already sent keep the provider they were ordered from. ' +
          'Every instance uses the new credentials within two seconds. Guide: docs/operating/payout-providers.md.',
        tags,
        body: PutIncentiveProviderBody,
        response: {
          200: Type.Ref('IncentiveProviderSetting'),
          400: errorResponse('Invalid input; `path` names the field: a provider not built in, a credential the provider does not take, or one it needs missing.'),
        },
      },
    },
    async (request) => service.putSetting(context(request), request.body),
  );

  app.delete(
    '/incentive-provider',
    {
      config: { right: 'incentive-providers:manage' },
      schema: {
        operationId: 'deleteIncentiveProvider',
        summary: "Go back to the service's default incentive provider",
        description:
          "New incentives are ordered from the service's configured provider again (the sandbox unless INCENTIVE_PROVIDER says otherwise). Stored credentials stay, for the incentives already ordered through them.",
        tags,
        response: { 200: Type.Ref('IncentiveProviderSetting') },
      },
    },
    async (request) => service.clearSetting(context(request)),
  );
};

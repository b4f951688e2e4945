import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { ServiceDeps } from '../../context.js';

/**
 * Routes that exist only with TEST_HELPERS=1: they move the service's clock (section 4 of the
 * contract). Claims, failures and jobs arrive with the families that need them.
 */
export const testHelperRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  const common = { tags: ['Test helpers'], hide: true } as const;
  app.post(
    '/clock',
    {
      config: { public: true },
      schema: {
        ...common,
        operationId: 'setClock',
        summary: "Set the service's clock",
        body: Type.Object({ now: Type.String({ format: 'date-time' }) }, { additionalProperties: false }),
        response: { 200: Type.Object({ now: Type.String() }) },
      },
    },
    async (request) => {
      deps.clock.set(new Date(request.body.now));
      return { now: deps.clock.now().toISOString() };
    },
  );
  app.delete(
    '/clock',
    {
      config: { public: true },
      schema: { ...common, operationId: 'resetClock', summary: 'Restore real time', response: { 200: Type.Object({ now: Type.String() }) } },
    },
    async () => {
      deps.clock.reset();
      return { now: deps.clock.now().toISOString() };
    },
  );
};

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { requestContext, type ServiceDeps } from '../../context.js';
import { cursorScope, listPage } from '../../http/pagination.js';
import { errorResponse } from '../../http/schemas.js';
import { ApprovalSettings, BudgetIdParams, BudgetListQuery, CreateBudgetBody, IncentiveBudget, IncentiveBudgetList, UpdateBudgetBody } from './schemas.js';
import * as service from './service.js';

const tags = ['Incentives'];
const budgetNotFound = errorResponse("Incentive budget not found (also for another workspace's budget).");
const guide = 'Guide: docs/api/incentives.md#budgets.';

export const incentiveBudgetsRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  const context = (request: FastifyRequest) => requestContext(deps, request);

  app.post(
    '/incentive-budgets',
    {
      config: { right: 'incentives:approve' },
      schema: {
        operationId: 'createIncentiveBudget',
        summary: 'Create an incentive budget',
        description: `A budget in one currency: incentives that name it (budgetId) take their amount from it as they are recorded, never past its limit. Only who may approve incentives makes and changes budgets (the incentives:approve right: SUPER_ADMIN, OPS_MANAGER), so a sender cannot raise the limit they spend against. ${guide}`,
        tags,
        body: CreateBudgetBody,
        response: { 201: Type.Ref(IncentiveBudget), 400: errorResponse('Invalid input; `path` names the field (currency not supported, limitCents out of range).') },
      },
    },
    async (request, reply) => reply.code(201).send(await service.createBudget(context(request), request.body)),
  );

  app.get(
    '/incentive-budgets',
    {
      config: { right: 'incentives:read' },
      schema: {
        operationId: 'listIncentiveBudgets',
        summary: 'List incentive budgets',
        description: `In the order they were made, keyset-paged; archived ones with includeArchived=true. ${guide}`,
        tags,
        querystring: BudgetListQuery,
        response: { 200: IncentiveBudgetList, 400: errorResponse('Invalid query (a cursor of another query).') },
      },
    },
    async (request) =>
      listPage(
        deps.cursors,
        cursorScope(context(request).workspaceId, `incentive-budgets:${request.query.includeArchived === true}`),
        request.query,
        (budget) => budget.budgetId,
        (after, size) => service.listBudgets(context(request), request.query.includeArchived === true, after, size),
      ),
  );

  app.get(
    '/incentive-budgets/:budgetId',
    {
      config: { right: 'incentives:read' },
      schema: {
        operationId: 'getIncentiveBudget',
        summary: 'Get an incentive budget',
        description: `With what is spent and what remains, as of now. ${guide}`,
        tags,
        params: BudgetIdParams,
        response: { 200: Type.Ref(IncentiveBudget), 404: budgetNotFound },
      },
    },
    async (request) => service.getBudget(context(request), request.params.budgetId),
  );

  app.patch(
    '/incentive-budgets/:budgetId',
    {
      config: { right: 'incentives:approve' },
      schema: {
        operationId: 'updateIncentiveBudget',
        summary: 'Rename an incentive budget or change its limit',
        description: `The currency never changes. A limit below what is spent is a 409. Only who may approve incentives makes and changes budgets (the incentives:approve right: SUPER_ADMIN, OPS_MANAGER), so a sender cannot raise the limit they spend against. ${guide}`,
        tags,
        params: BudgetIdParams,
        body: UpdateBudgetBody,
        response: {
          200: Type.Ref(IncentiveBudget),
          400: errorResponse('Invalid input; `path` names the field.'),
          404: budgetNotFound,
          409: errorResponse('limitCents is below what is spent (path ["limitCents"]).'),
        },
      },
    },
    async (request) => service.updateBudget(context(request), request.params.budgetId, request.body),
  );

  app.post(
    '/incentive-budgets/:budgetId/archive',
    {
      config: { right: 'incentives:approve' },
      schema: {
        operationId: 'archiveIncentiveBudget',
        summary: 'Archive an incentive budget',
        description: `No new incentive is paid from it (409 naming ["budgetId"]); those sent before stay, and still give their amount back if they end unpaid. Archiving again changes nothing. Only who may approve incentives makes and changes budgets (the incentives:approve right: SUPER_ADMIN, OPS_MANAGER), so a sender cannot raise the limit they spend against. ${guide}`,
        tags,
        params: BudgetIdParams,
        response: { 200: Type.Ref(IncentiveBudget), 404: budgetNotFound },
      },
    },
    async (request) => service.archiveBudget(context(request), request.params.budgetId),
  );

  app.get(
    '/incentive-approval-settings',
    {
      config: { right: 'incentives:read' },
      schema: {
        operationId: 'getIncentiveApprovalSettings',
        summary: 'Read the approval thresholds',
        description: 'Per currency, the amount above which a provider-backed incentive waits for approval. Guide: docs/api/incentives.md#approvals.',
        tags,
        response: { 200: ApprovalSettings },
      },
    },
    async (request) => service.getApprovalSettings(context(request)),
  );

  app.put(
    '/incentive-approval-settings',
    {
      config: { right: 'incentives:approve' },
      schema: {
        operationId: 'putIncentiveApprovalSettings',
        summary: 'Set the approval thresholds',
        description:
          'Replaces every threshold. Only who may approve may set them (the incentives:approve right: SUPER_ADMIN, OPS_MANAGER), so a sender cannot ' +
          'lift the threshold on their own payments. They apply to incentives sent from then on. Guide: docs/api/incentives.md#approvals.',
        tags,
        body: ApprovalSettings,
        response: { 200: ApprovalSettings, 400: errorResponse('Invalid input; `path` names the field (an unsupported currency, one given twice).') },
      },
    },
    async (request) => service.putApprovalSettings(context(request), request.body),
  );
};

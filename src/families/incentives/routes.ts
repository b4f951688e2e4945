import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { requestContext, type ServiceDeps } from '../../context.js';
import { idempotencyOf, REPLAYED_HEADER } from '../../http/idempotency/plugin.js';
import { errorResponse } from '../../http/schemas.js';
import { cursorScope, listPage } from '../../http/pagination.js';
import { Incentive, IncentiveActionResult, IncentiveIdParams, IncentiveLedger, IncentiveList, LedgerEntryList, LedgerQuery, RefuseIncentiveBody, SendIncentiveBody } from './schemas.js';
import { ListQuery } from '../../http/schemas.js';
import { ledgerOfIncentive, listLedger, presentLedgerEntry } from './ledger.js';
import * as service from './service.js';

const tags = ['Incentives'];
const incentiveNotFound = errorResponse("Incentive not found (also for another workspace's incentive).");
const recipientNote =
  '`recipientEmail` is the recipient\'s current email: null once the person is deleted, masked ("***@***") for tokens without the personal-data right.';
const draftNote = 'The reference allows this only while the incentive\'s study is in DRAFT: otherwise 409 "Study is not in draft status" (path ["studyId"]).';

export const incentivesRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  const context = (request: FastifyRequest) => requestContext(deps, request);

  app.post(
    '/incentives',
    {
      config: { right: 'incentives:write' },
      schema: {
        operationId: 'sendIncentive',
        summary: 'Send an incentive',
        description:
          'Pays a participant. MONEY_OR_GIFT_CARD and PROVIDER_ONE_MONEY are ordered at the incentive provider and start UNCLAIMED ' +
          '(then CLAIMED, ERROR, CANCELED or EXPIRED); CUSTOM and RECRUITMENT_FEE are handed over outside the service, recorded as SENT. ' +
          "budgetId, customIncentiveId and customIncentiveValue default to the study plan's incentive settings. " +
          'amountCents is required, except for CUSTOM: a CUSTOM incentive may be a thing rather than money (a gift, a voucher code), ' +
          'sent with a customIncentiveValue and no amount; it then reads amountCents 0, and sums of money sent count it as 0.\n\n' +
          'The incentive is recorded before the provider is called, so it is never half-sent: if the provider refuses the order the ' +
          'answer is still 201, with status ERROR; if the provider does not answer in time it is 201 with status UNCLAIMED, and the ' +
          'service orders again in the background (with the incentive id as the provider\'s idempotency key, so it is paid once) until ' +
          'the provider confirms, or voids it and marks it ERROR after about two hours of attempts.\n\n' +
          'Send an `Idempotency-Key` to retry safely: the key is also kept on the incentive itself, so one key never pays twice, even ' +
          'after the 24 hours the service keeps ordinary keys.\n\n' +
          "Money: amountCents is in the currency's minor unit (currency: given, else the budget's, else USD). With a budget the amount is " +
          "taken from it in the transaction that records the incentive (never overspent). Above the workspace's approval threshold for the " +
          'currency a provider-backed incentive waits for a second person (approval.state PENDING, not ordered). Guide: docs/api/incentives.md. ' +
          recipientNote,
        tags,
        body: SendIncentiveBody,
        response: {
          201: Type.Ref(Incentive),
          400: errorResponse(
            'Invalid input; `path` names the offending field: amountCents missing on a type other than CUSTOM, customIncentiveId or ' +
              'customIncentiveValue on a type other than CUSTOM, or a CUSTOM incentive with neither amountCents nor a customIncentiveValue ' +
              "(given or the study plan's default; path [\"customIncentiveValue\"]); an unsupported currency or one other than the budget's " +
              '(path ["currency"]); an amount above the currency\'s maximum (path ["amountCents"], with the range).',
          ),
          404: errorResponse(
            'The participant does not exist in this workspace, or its person was deleted (path ["participantId"]); or the budget does not (path ["budgetId"]).',
          ),
          409: errorResponse('The budget is archived, or has too little left for the amount (path ["budgetId"]).'),
        },
      },
    },
    async (request, reply) => {
      const result = await service.sendIncentive(context(request), deps.providers, request.body, idempotencyOf(request));
      if (result.replayed) reply.header(REPLAYED_HEADER, 'true');
      return reply.code(201).send(result.incentive);
    },
  );

  app.get(
    '/incentives/:incentiveId',
    {
      config: { right: 'incentives:read' },
      schema: {
        operationId: 'getIncentive',
        'x-reference-id': 'E13',
        summary: 'Get an incentive',
        description: `An incentive of the workspace. ${recipientNote}`,
        tags,
        params: IncentiveIdParams,
        response: { 200: Type.Ref(Incentive), 404: incentiveNotFound },
      },
    },
    async (request) => service.getIncentive(context(request), request.params.incentiveId),
  );

  app.post(
    '/incentives/:incentiveId/resend',
    {
      config: { right: 'incentives:write' },
      schema: {
        operationId: 'resendIncentive',
        'x-reference-id': 'E16',
        summary: 'Resend an incentive',
        description:
          'Asks the provider to send the claim email of an already-sent incentive again. Only provider-backed incentives that are not ' +
          'canceled and not expired, with an order at the provider (not still being ordered or canceled, not refused). Status does not change. ' +
          draftNote,
        tags,
        params: IncentiveIdParams,
        response: {
          200: IncentiveActionResult,
          404: incentiveNotFound,
          409: errorResponse(
            'Study is not in draft status (path ["studyId"]); or the incentive cannot be resent, the message says why (path ["incentiveId"]): ' +
              'not provider-backed, canceled, expired or expiring (its order being voided at the provider), still being ordered, being canceled, ' +
              'its order refused or voided, or the provider refused the resend.',
          ),
          502: errorResponse('The provider did not confirm the resend in time (path ["incentiveId"]); retrying is safe.'),
        },
      },
    },
    async (request) => service.resendIncentive(context(request), deps.providers, request.params.incentiveId),
  );

  app.post(
    '/incentives/:incentiveId/cancel',
    {
      config: { right: 'incentives:write' },
      schema: {
        operationId: 'cancelIncentive',
        'x-reference-id': 'E17',
        summary: 'Cancel an incentive',
        description:
          'Cancels an already-sent incentive: a provider-backed one (UNCLAIMED) is voided at the provider and becomes CANCELED when the ' +
          'provider confirms; a CUSTOM or RECRUITMENT_FEE one (SENT) is marked CANCELED. If the provider does not answer in time the ' +
          'answer is 502 and the service keeps asking it in the background; the incentive becomes CANCELED once it confirms. ' +
          draftNote,
        tags,
        params: IncentiveIdParams,
        response: {
          200: IncentiveActionResult,
          404: incentiveNotFound,
          409: errorResponse(
            'Study is not in draft status (path ["studyId"]); or the incentive cannot be canceled, the message says why (path ["incentiveId"]): ' +
              'already claimed, already canceled, expired or expiring (its order being voided at the provider), failed, still being ordered at ' +
              'the provider, or the provider refused the void.',
          ),
          502: errorResponse('The provider did not confirm the void in time (path ["incentiveId"]); the service keeps asking it.'),
        },
      },
    },
    async (request) => service.cancelIncentive(context(request), deps.providers, request.params.incentiveId),
  );

  const decisionErrors = {
    404: incentiveNotFound,
    409: errorResponse(
      'The incentive does not wait for approval, was already approved, refused or withdrawn (two approvers at once: one wins), or the caller ' +
        'sent it (a second person decides); the message says which (path ["incentiveId"]).',
    ),
  };
  const approvalsNote =
    'Only users with the incentives:approve right (SUPER_ADMIN, OPS_MANAGER) and never the incentive\'s sender. Guide: docs/api/incentives.md#approvals.';

  app.get(
    '/incentive-approvals',
    {
      config: { right: 'incentives:read' },
      schema: {
        operationId: 'listPendingIncentiveApprovals',
        summary: 'List incentives waiting for approval',
        description: `Incentives whose approval.state is PENDING, oldest first, keyset-paged. ${recipientNote}`,
        tags,
        querystring: ListQuery,
        response: { 200: IncentiveList, 400: errorResponse('Invalid query (a cursor of another query).') },
      },
    },
    async (request) =>
      listPage(deps.cursors, cursorScope(context(request).workspaceId, 'incentive-approvals'), request.query, (incentive) => incentive.incentiveId, (after, size) =>
        service.listAwaitingApproval(context(request), after, size),
      ),
  );

  app.post(
    '/incentives/:incentiveId/approve',
    {
      config: { right: 'incentives:approve' },
      schema: {
        operationId: 'approveIncentive',
        summary: 'Approve an incentive',
        description:
          'Approves an incentive waiting for approval and orders it at the provider (as a send does: a refusal reads ERROR, an unknown outcome is ' +
          `retried in the background, paid once). ${approvalsNote}`,
        tags,
        params: IncentiveIdParams,
        response: { 200: Type.Ref(Incentive), ...decisionErrors },
      },
    },
    async (request) => service.approveIncentive(context(request), deps.providers, request.params.incentiveId),
  );

  app.post(
    '/incentives/:incentiveId/refuse',
    {
      config: { right: 'incentives:approve' },
      schema: {
        operationId: 'refuseIncentive',
        summary: 'Refuse an incentive',
        description: `Refuses an incentive waiting for approval: it is never ordered, reads CANCELED with approval.state REFUSED, and gives its budget its amount back. ${approvalsNote}`,
        tags,
        params: IncentiveIdParams,
        body: RefuseIncentiveBody,
        response: { 200: Type.Ref(Incentive), 400: errorResponse('Invalid input; `path` names the field.'), ...decisionErrors },
      },
    },
    async (request) => service.refuseIncentive(context(request), request.params.incentiveId, request.body.reason),
  );

  app.get(
    '/incentives/:incentiveId/ledger',
    {
      config: { right: 'incentives:read' },
      schema: {
        operationId: 'getIncentiveLedger',
        summary: "An incentive's ledger",
        description: 'Every money event of the incentive, oldest first, with who or what did it. Guide: docs/api/incentives.md#the-ledger.',
        tags,
        params: IncentiveIdParams,
        response: { 200: IncentiveLedger, 404: incentiveNotFound },
      },
    },
    async (request) => {
      const call = context(request);
      const incentive = await service.getIncentive(call, request.params.incentiveId);
      const rows = await ledgerOfIncentive(call.db, call.workspaceId, incentive.incentiveId);
      return { results: rows.map((row) => presentLedgerEntry(row, call.canReadPersonalData)) };
    },
  );

  app.get(
    '/incentive-ledger',
    {
      config: { right: 'incentives:read' },
      schema: {
        operationId: 'listIncentiveLedger',
        summary: "The workspace's money ledger",
        description:
          'Every order, approval, refusal, resend, cancellation, expiry and provider report, in the order written, keyset-paged, within [since, until). ' +
          'Append-only, and kept after a person is deleted (without their values). Guide: docs/api/incentives.md#the-ledger.',
        tags,
        querystring: LedgerQuery,
        response: { 200: LedgerEntryList, 400: errorResponse('Invalid query; `path` names the field.') },
      },
    },
    async (request) => {
      const call = context(request);
      const { since, until } = request.query;
      return listPage(deps.cursors, cursorScope(call.workspaceId, `incentive-ledger:${since ?? ''}:${until ?? ''}`), request.query, (entry) => entry.entryId, async (after, size) => {
        const { rows, total } = await listLedger(call.db, call.workspaceId, { since, until }, after, size);
        return { rows: rows.slice(0, size).map((row) => presentLedgerEntry(row, call.canReadPersonalData)), hasNextPage: rows.length > size, total };
      });
    },
  );
};

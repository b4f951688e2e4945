import { type Static, Type } from '@sinclair/typebox';
import { ListQuery, paged, Text } from '../../http/schemas.js';
import { currencyDescription } from '../incentives/currencies.js';

const Amount = (description: string) => Type.Integer({ minimum: 0, maximum: 2_000_000_000, description });

export const exampleBudget = {
  budgetId: 'bgt_01JD0000000000000000000000',
  name: 'Research 2026',
  currency: 'USD',
  limitCents: 500_000,
  spentCents: 7_500,
  remainingCents: 492_500,
  archived: false,
  createdAt: '2026-11-22T10:00:00.000Z',
  updatedAt: '2026-11-22T10:00:00.000Z',
};

export const IncentiveBudget = Type.Object(
  {
    budgetId: Type.String({ description: "The id incentives name (budgetId) and study plans default to (incentive.incentiveBudgetId)." }),
    name: Type.String(),
    currency: Type.String({ description: `${currencyDescription} Incentives paid from the budget are in it.` }),
    limitCents: Amount('The most its incentives may add up to, in the minor unit.'),
    spentCents: Amount(
      'What its incentives hold, in the minor unit: every one sent from it that did not end unpaid (CANCELED, ERROR, EXPIRED, or refused approval: ' +
        'those gave their amount back). Incentives waiting for approval hold theirs.',
    ),
    remainingCents: Amount('limitCents − spentCents.'),
    archived: Type.Boolean({ description: 'Archived budgets take no new incentives; those sent before are unchanged (and still give back).' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'IncentiveBudget', title: 'IncentiveBudget', examples: [exampleBudget] },
);
export type IncentiveBudget = Static<typeof IncentiveBudget>;

export const IncentiveBudgetList = paged(Type.Ref(IncentiveBudget), 'IncentiveBudgetList', exampleBudget);

export const CreateBudgetBody = Type.Object(
  {
    name: Text({ minLength: 1, maxLength: 200 }),
    currency: Type.String({ minLength: 3, maxLength: 3, description: currencyDescription }),
    limitCents: Amount('The most its incentives may add up to, in the minor unit of currency.'),
  },
  { additionalProperties: false, examples: [{ name: 'Research 2026', currency: 'USD', limitCents: 500_000 }] },
);
export type CreateBudgetBody = Static<typeof CreateBudgetBody>;

export const UpdateBudgetBody = Type.Object(
  {
    name: Type.Optional(Text({ minLength: 1, maxLength: 200 })),
    limitCents: Type.Optional(Amount('The new limit: not below what is spent (409 naming ["limitCents"]). The currency never changes.')),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ limitCents: 750_000 }] },
);
export type UpdateBudgetBody = Static<typeof UpdateBudgetBody>;

export const BudgetIdParams = Type.Object({ budgetId: Type.String({ minLength: 1, maxLength: 100 }) });

export const BudgetListQuery = Type.Object(
  { ...ListQuery.properties, includeArchived: Type.Optional(Type.Boolean({ default: false, description: 'Archived budgets too.' })) },
  { additionalProperties: false },
);

export const ApprovalThreshold = Type.Object(
  {
    currency: Type.String({ minLength: 3, maxLength: 3, description: currencyDescription }),
    amountCents: Amount('Provider-backed incentives in this currency above this amount (minor unit) wait for approval; 0: every one does.'),
  },
  { additionalProperties: false },
);

export const ApprovalSettings = Type.Object(
  {
    thresholds: Type.Array(ApprovalThreshold, {
      maxItems: 50,
      description: 'One per currency at most. A currency without a threshold needs no approval.',
    }),
  },
  { additionalProperties: false, title: 'IncentiveApprovalSettings', examples: [{ thresholds: [{ currency: 'USD', amountCents: 20_000 }, { currency: 'JPY', amountCents: 30_000 }] }] },
);
export type ApprovalSettings = Static<typeof ApprovalSettings>;

export const incentiveBudgetSchemas = [IncentiveBudget];

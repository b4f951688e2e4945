import { type Static, Type } from '@sinclair/typebox';
import { IsoDateTime } from '../../http/schemas.js';
import { providerNames } from '../../providers/index.js';

const ProviderName = Type.String({
  enum: [...providerNames],
  description: `The provider: ${providerNames.map((name) => `\`${name}\``).join(', ')}. \`sandbox\` pays no one and reaches nothing outside the service.`,
});

const Environment = Type.Union([Type.Literal('SANDBOX'), Type.Literal('PRODUCTION')], {
  description:
    "Which of the provider's own environments the service reaches: its published sandbox (test money) or production URL. The service, not the workspace, knows the URLs (an operator may point a provider elsewhere with TREMENDOUS_API_URL / TANGO_API_URL).",
});

export const PutIncentiveProviderBody = Type.Object(
  {
    provider: ProviderName,
    environment: Type.Optional({ ...Environment, default: 'SANDBOX' }),
    credentials: Type.Optional(
      Type.Record(Type.String({ pattern: '^[A-Za-z][A-Za-z0-9]{0,63}$' }), Type.String({ minLength: 1, maxLength: 4096 }), {
        maxProperties: 16,
        description:
          'The account\'s credentials by name, stored encrypted (AES-256-GCM under SECRETS_KEY) and never answered back. Tremendous: `apiKey`, `campaignId`, `webhookSecret` (the private key of its webhook), optional `fundingSourceId` (`balance` unless given). Tango Card: `platformName`, `platformKey`, `customerIdentifier`, `accountIdentifier`, a catalog item `utid` (with `utidCurrency`, USD unless given) or one per currency (`utidEUR`, `utidJPY`, …), optional `etid` and `webhookSecret` (the base64 HMAC key given to Tango). ' +
          'Given, they replace what was stored; left out, the stored ones stay (switching back to a provider set up before).',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ provider: 'tremendous', environment: 'SANDBOX', credentials: { apiKey: 'TEST_xxxxxxxxxxxxxxxx', campaignId: 'CAMPAIGN1', webhookSecret: 'the-webhook-private-key' } }],
  },
);
export type PutIncentiveProviderBody = Static<typeof PutIncentiveProviderBody>;

export const IncentiveProviderSetting = Type.Object(
  {
    provider: ProviderName,
    source: Type.Union([Type.Literal('WORKSPACE'), Type.Literal('CONFIGURATION')], {
      description: "`WORKSPACE`: set through this API; `CONFIGURATION`: the service's default (INCENTIVE_PROVIDER), as no provider is set for the workspace.",
    }),
    environment: Type.Union([Environment, Type.Null()]),
    credentialsSet: Type.Array(Type.String(), { description: 'The names of the credentials stored (never their values).' }),
    credentialsMissing: Type.Array(Type.String(), { description: 'The names of required credentials not stored: orders would fail until they are given.' }),
    webhookUrl: Type.Union([Type.String(), Type.Null()], { description: "Where to point the provider's webhooks (its claim and delivery reports); null for the sandbox, which sends none." }),
    version: Type.Union([Type.Integer(), Type.Null()], { description: 'Bumped on every change of this account.' }),
    updatedAt: Type.Union([IsoDateTime(), Type.Null()]),
  },
  {
    $id: 'IncentiveProviderSetting',
    examples: [
      {
        provider: 'tremendous',
        source: 'WORKSPACE',
        environment: 'SANDBOX',
        credentialsSet: ['apiKey', 'campaignId', 'webhookSecret'],
        credentialsMissing: [],
        webhookUrl: 'https://recruit.example.com/v1/provider-webhooks/tremendous/wsp_01hxyz',
        version: 1,
        updatedAt: '2026-12-09T10:00:00.000Z',
      },
    ],
  },
);
export type IncentiveProviderSetting = Static<typeof IncentiveProviderSetting>;

export const incentiveProviderSchemas = [IncentiveProviderSetting];

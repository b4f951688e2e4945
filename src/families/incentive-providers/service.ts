import type { Clock } from '../../clock.js';
import { type Kysely, type Selectable, sql } from 'kysely';
import type { DB, IncentiveProviderAccountsTable } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { badRequest } from '../../http/errors.js';
import { findAccount } from '../../providers/accounts.js';
import { type IncentiveProviders, isProviderName, type ProviderName, providerApiUrls, providerCredentials } from '../../providers/index.js';
import type { IncentiveProviderSetting, PutIncentiveProviderBody } from './schemas.js';

export interface ProviderSettingContext {
  db: Kysely<DB>;
  clock: Clock;
  workspaceId: string;
  userId: string;
  providers: IncentiveProviders;
  /** The service's public origin: the webhook URL is under it. */
  publicUrl: string;
}

const webhookUrl = (context: ProviderSettingContext, provider: ProviderName) =>
  providerApiUrls[provider] === null ? null : `${context.publicUrl}/v1/provider-webhooks/${provider}/${context.workspaceId}`;

function present(context: ProviderSettingContext, account: Pick<Selectable<IncentiveProviderAccountsTable>, 'provider' | 'environment' | 'credential_names' | 'version' | 'updated_at'>): IncentiveProviderSetting {
  const provider = account.provider as ProviderName;
  return {
    provider,
    source: 'WORKSPACE',
    environment: providerApiUrls[provider] === null ? null : account.environment,
    credentialsSet: [...account.credential_names].sort(),
    credentialsMissing: providerCredentials[provider].required.filter((name) => !account.credential_names.includes(name)),
    webhookUrl: webhookUrl(context, provider),
    version: account.version,
    updatedAt: account.updated_at,
  };
}

/** The workspace's provider: its own selected account, else the service's configured default. */
export async function getSetting(context: ProviderSettingContext): Promise<IncentiveProviderSetting> {
  const selected = await context.db
    .selectFrom('incentive_provider_accounts')
    .select(['provider', 'environment', 'credential_names', 'version', 'updated_at'])
    .where('workspace_id', '=', context.workspaceId)
    .where('selected', '=', true)
    .executeTakeFirst();
  if (selected && isProviderName(selected.provider)) return present(context, selected);
  const provider = context.providers.current;
  return {
    provider,
    source: 'CONFIGURATION',
    environment: null,
    credentialsSet: [],
    credentialsMissing: [],
    webhookUrl: null,
    version: null,
    updatedAt: null,
  };
}

/**
 * Names the provider new incentives of the workspace are ordered from, with its credentials
 * (sealed before they are stored). Incentives already ordered keep theirs: an account replaced
 * by another stays stored, unselected, so they can still be resent, voided and reconciled.
 */
export async function putSetting(context: ProviderSettingContext, body: PutIncentiveProviderBody): Promise<IncentiveProviderSetting> {
  const accounts = context.providers.accounts;
  if (!accounts) throw new Error('This service keeps no provider accounts');
  const provider = body.provider as ProviderName;
  const spec = providerCredentials[provider];
  const allowed = [...spec.required, ...spec.optional];
  for (const name of Object.keys(body.credentials ?? {})) {
    if (!allowed.includes(name)) {
      throw badRequest(allowed.length === 0 ? `${provider} takes no credentials` : `${provider} takes the credentials ${allowed.join(', ')}`, ['credentials', name]);
    }
  }
  const at = context.clock.now().toISOString();
  const scope = { workspaceId: context.workspaceId, provider };
  const saved = await inTransaction(context.db, async (db) => {
    // One change of a workspace's provider at a time: two at once, naming different providers,
    // each unselected the other's row before either was written, and the second write met the
    // one-selected index (a 500). Now the second waits and then replaces the first.
    await sql`select pg_advisory_xact_lock(hashtext(${`incentive-provider:${context.workspaceId}`}))`.execute(db);
    const existing = await findAccount(db, context.workspaceId, provider);
    const credentials = body.credentials ?? (existing ? accounts.box.open(existing.credentials_ciphertext, scope) : {});
    const missing = spec.required.filter((name) => !credentials[name]);
    if (missing.length > 0) throw badRequest(`${provider} needs the credentials ${missing.join(', ')}`, ['credentials', missing[0]!]);
    const environment = body.environment ?? 'SANDBOX';
    await db.updateTable('incentive_provider_accounts').set({ selected: false }).where('workspace_id', '=', context.workspaceId).where('selected', '=', true).where('provider', '<>', provider).execute();
    const row = {
      environment,
      credentials_ciphertext: accounts.box.seal(credentials, scope),
      credentials_key_id: accounts.box.keyId,
      credential_names: Object.keys(credentials).sort(),
      selected: true,
      updated_by_user_id: context.userId,
      updated_at: at,
    };
    return db
      .insertInto('incentive_provider_accounts')
      .values({ workspace_id: context.workspaceId, provider, version: 1, created_at: at, ...row })
      .onConflict((conflict) =>
        conflict.columns(['workspace_id', 'provider']).doUpdateSet((eb) => ({ ...row, version: eb('incentive_provider_accounts.version', '+', 1) })),
      )
      .returning(['provider', 'environment', 'credential_names', 'version', 'updated_at'])
      .executeTakeFirstOrThrow();
  });
  accounts.forget(context.workspaceId);
  return present(context, saved);
}

/** Back to the service's default provider for new incentives; stored accounts stay for the incentives ordered through them. */
export async function clearSetting(context: ProviderSettingContext): Promise<IncentiveProviderSetting> {
  await context.db
    .updateTable('incentive_provider_accounts')
    .set({ selected: false, updated_by_user_id: context.userId, updated_at: context.clock.now().toISOString() })
    .where('workspace_id', '=', context.workspaceId)
    .where('selected', '=', true)
    .execute();
  context.providers.accounts?.forget(context.workspaceId);
  return getSetting(context);
}

import type { Kysely } from 'kysely';
import type { DB, IncentiveProviderAccountsTable } from '../db/schema.js';
import type { CredentialBox } from './credentials.js';
import type { IncentiveProvider } from './provider.js';
import { type ProviderName, providerApiUrls, providerFactories } from './index.js';

/** How long an instance trusts what it read of a workspace's accounts: a change reaches every instance within it. */
export const ACCOUNT_CACHE_MS = 2_000;

type AccountVersion = Pick<IncentiveProviderAccountsTable, 'provider' | 'version' | 'selected'>;

interface CachedVersions {
  readAt: number;
  accounts: AccountVersion[];
}

/**
 * The workspaces' accounts at real providers, as adapters. What an instance knows of a
 * workspace's accounts (which one is selected, each one's version) is read from the database
 * and kept ACCOUNT_CACHE_MS; adapters are kept per workspace, provider and version, so a new
 * version (credentials changed on any instance) makes a new adapter with the new credentials,
 * and an old one is never used again.
 */
export class ProviderAccounts {
  private readonly versions = new Map<string, CachedVersions>();
  private readonly adapters = new Map<string, IncentiveProvider>();

  constructor(
    readonly box: CredentialBox,
    private readonly apiUrlOverrides: Readonly<Record<string, string>>,
    private readonly now: () => number = Date.now,
  ) {}

  /** The base URL the service reaches `provider` at for an account in `environment`: the operator's, else the published one. */
  apiBaseUrl(provider: ProviderName, environment: IncentiveProviderAccountsTable['environment']): string {
    const override = this.apiUrlOverrides[provider];
    if (override) return override.replace(/\/+$/, '');
    const published = providerApiUrls[provider];
    if (!published) throw new Error(`Incentive provider ${provider} has no API`);
    return published[environment];
  }

  /** Forgets what this instance read of a workspace (after its own change: the next read is fresh). */
  forget(workspaceId: string): void {
    this.versions.delete(workspaceId);
  }

  async selected(db: Kysely<DB>, workspaceId: string): Promise<ProviderName | undefined> {
    const accounts = await this.accountVersions(db, workspaceId);
    return accounts.find((account) => account.selected)?.provider as ProviderName | undefined;
  }

  async adapter(db: Kysely<DB>, workspaceId: string, provider: ProviderName): Promise<IncentiveProvider> {
    const known = (await this.accountVersions(db, workspaceId)).find((account) => account.provider === provider);
    if (!known) throw new Error(`Workspace ${workspaceId} has no account at ${provider}`);
    const key = `${workspaceId}/${provider}/${known.version}`;
    const cached = this.adapters.get(key);
    if (cached) return cached;
    const account = await findAccount(db, workspaceId, provider);
    if (!account) throw new Error(`Workspace ${workspaceId} has no account at ${provider}`);
    const adapter = providerFactories[provider]({
      credentials: Object.freeze(this.box.open(account.credentials_ciphertext, { workspaceId, provider })),
      apiBaseUrl: this.apiBaseUrl(provider, account.environment),
    });
    // Only the version read is cached: older versions of this account are dropped.
    for (const other of this.adapters.keys()) if (other.startsWith(`${workspaceId}/${provider}/`)) this.adapters.delete(other);
    this.adapters.set(`${workspaceId}/${provider}/${account.version}`, adapter);
    return adapter;
  }

  /** The webhook secret of a workspace's account at `provider`, or undefined when it has none (no oracle: the caller answers alike). */
  async webhookSecret(db: Kysely<DB>, workspaceId: string, provider: ProviderName): Promise<string | undefined> {
    const account = await findAccount(db, workspaceId, provider);
    if (!account) return undefined;
    return this.box.open(account.credentials_ciphertext, { workspaceId, provider }).webhookSecret;
  }

  private async accountVersions(db: Kysely<DB>, workspaceId: string): Promise<AccountVersion[]> {
    const cached = this.versions.get(workspaceId);
    if (cached && this.now() - cached.readAt < ACCOUNT_CACHE_MS) return cached.accounts;
    const accounts = await db
      .selectFrom('incentive_provider_accounts')
      .select(['provider', 'version', 'selected'])
      .where('workspace_id', '=', workspaceId)
      .execute();
    this.versions.set(workspaceId, { readAt: this.now(), accounts });
    // A bounded cache: workspaces not asked about lately fall out first.
    if (this.versions.size > 10_000) this.versions.delete(this.versions.keys().next().value!);
    return accounts;
  }
}

export async function findAccount(db: Kysely<DB>, workspaceId: string, provider: string) {
  return db.selectFrom('incentive_provider_accounts').selectAll().where('workspace_id', '=', workspaceId).where('provider', '=', provider).executeTakeFirst();
}

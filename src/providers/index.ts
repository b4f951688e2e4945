import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { ProviderAccounts } from './accounts.js';
import { type IncentiveProvider, type ProviderCallOptions, ProviderRefusal } from './provider.js';
import { SandboxProvider } from './sandbox.js';
import { createTangoProvider, TANGO_CREDENTIALS, TANGO_ITEM_CURRENCIES, TANGO_PRODUCTION_API_URL, TANGO_SANDBOX_API_URL } from './tango/tango.js';
import { TremendousProvider, tremendousApiUrls, tremendousCredentials } from './tremendous/adapter.js';

export * from './provider.js';
export { TANGO_CREDENTIALS, TANGO_REQUIRED_CREDENTIALS, TANGO_WEBHOOK_SECRET_CREDENTIAL, type TangoSettings, createTangoProvider } from './tango/tango.js';

/** What an adapter is made with: the workspace's credentials (decrypted) and the API's base URL (the operator's, never the workspace's). */
export interface ProviderSettings {
  credentials: Readonly<Record<string, string>>;
  apiBaseUrl: string;
}

/** The credentials a provider takes, by name; `webhookSecret` (when listed) is what its webhooks are verified with. */
export interface ProviderCredentialSpec {
  required: readonly string[];
  optional: readonly string[];
}

/**
 * Every provider the service can pay through, by the name INCENTIVE_PROVIDER and the
 * workspace's setting (PUT /v1/incentive-provider) take. A new provider is its adapter folder
 * and one line in each of the records below (see provider.ts).
 */
export const providerFactories = {
  sandbox: (_settings: ProviderSettings): IncentiveProvider => new SandboxProvider(),
  tremendous: (settings: ProviderSettings): IncentiveProvider => new TremendousProvider(settings),
  tango: (settings: ProviderSettings): IncentiveProvider => createTangoProvider(settings),
} satisfies Record<string, (settings: ProviderSettings) => IncentiveProvider>;

export type ProviderName = keyof typeof providerFactories;
export const providerNames = Object.keys(providerFactories) as ProviderName[];
export const DEFAULT_PROVIDER = 'sandbox' satisfies ProviderName;

/** The credentials each provider takes (the sandbox none: it needs no account). */
export const providerCredentials: Record<ProviderName, ProviderCredentialSpec> = {
  sandbox: { required: [], optional: [] },
  tremendous: tremendousCredentials,
  tango: {
    required: TANGO_CREDENTIALS.filter((credential) => credential.required).map((credential) => credential.name),
    // A catalog item per currency (utidEUR, utidJPY, …) is one optional credential each.
    optional: [
      ...TANGO_CREDENTIALS.filter((credential) => !credential.required && credential.name !== 'utid<CURRENCY>').map((credential) => credential.name),
      ...TANGO_ITEM_CURRENCIES.map((currency) => `utid${currency}`),
    ],
  },
};

/**
 * Each real provider's published base URLs: a workspace says SANDBOX or PRODUCTION, and the
 * service picks the URL, so no workspace can point the service at an address of its choosing
 * (SSRF). The operator may set one URL per provider instead (providerApiUrlVariables): a proxy,
 * or a test's fake.
 */
export const providerApiUrls: Record<ProviderName, { SANDBOX: string; PRODUCTION: string } | null> = {
  sandbox: null,
  tremendous: tremendousApiUrls,
  tango: { SANDBOX: TANGO_SANDBOX_API_URL, PRODUCTION: TANGO_PRODUCTION_API_URL },
};

/** The environment variable of each provider's operator-set base URL. */
export const providerApiUrlVariables: Partial<Record<ProviderName, string>> & Record<string, string> = {
  tremendous: 'TREMENDOUS_API_URL',
  tango: 'TANGO_API_URL',
};

export const isProviderName = (name: string): name is ProviderName => Object.hasOwn(providerFactories, name);

/** How long the service waits for a provider call before treating its outcome as unknown. */
export const DEFAULT_PROVIDER_TIMEOUT_MS = 15_000;

/** A provider call's outcome: done, definitely refused, or unknown (timed out, connection lost, provider error). */
export type ProviderOutcome<T> = { kind: 'done'; value: T } | { kind: 'refused'; reason: string } | { kind: 'unknown'; reason: string };

const describe = (thrown: unknown) => (thrown instanceof Error ? thrown.message : String(thrown)).replaceAll('\u0000', '').slice(0, 1000);

/**
 * The providers of one process. New incentives are ordered from the workspace's selected provider
 * (its account, PUT /v1/incentive-provider), else from `current` (INCENTIVE_PROVIDER, the sandbox
 * by default); each incentive remembers its provider, so a change leaves older incentives with
 * theirs. Adapters of real providers are made per workspace and credential version (`accounts`,
 * read from the database through a short cache), so a credential change reaches every instance.
 */
export class IncentiveProviders {
  readonly current: ProviderName;
  readonly timeoutMs: number;
  /** Workspace accounts; absent (a demo seed, a unit test) means every workspace uses `current`. */
  accounts: ProviderAccounts | undefined;
  private readonly shared = new Map<string, IncentiveProvider>();

  constructor(current: ProviderName = DEFAULT_PROVIDER, options: { timeoutMs?: number } = {}) {
    this.current = current;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_PROVIDER_TIMEOUT_MS;
  }

  /** The provider a new incentive of this workspace is ordered from. */
  async selectedFor(db: Kysely<DB>, workspaceId: string): Promise<ProviderName> {
    const selected = await this.accounts?.selected(db, workspaceId);
    return selected ?? this.current;
  }

  /** The adapter an incentive of `workspaceId` ordered from `name` is reached through. */
  async adapter(db: Kysely<DB>, workspaceId: string, name: string): Promise<IncentiveProvider> {
    if (!isProviderName(name)) throw new Error(`Incentive provider ${name} is not built into this service`);
    if (providerApiUrls[name] === null) return this.get(name);
    if (!this.accounts) throw new Error(`Incentive provider ${name} needs a workspace account, and this service reads none`);
    return this.accounts.adapter(db, workspaceId, name);
  }

  /** A provider that needs no account (the sandbox): one instance per process. */
  get(name: string): IncentiveProvider {
    let provider = this.shared.get(name);
    if (!provider) {
      if (!isProviderName(name)) throw new Error(`Incentive provider ${name} is not built into this service`);
      if (providerApiUrls[name] !== null) throw new Error(`Incentive provider ${name} is reached through a workspace's account`);
      provider = providerFactories[name]({ credentials: {}, apiBaseUrl: '' });
      this.shared.set(name, provider);
    }
    return provider;
  }

  /** The built-in sandbox of this process (tests inject faults into it). */
  get sandbox(): SandboxProvider {
    const provider = this.get('sandbox');
    if (!(provider instanceof SandboxProvider)) throw new Error('The sandbox provider is not the SandboxProvider');
    return provider;
  }

  /**
   * Runs one provider call with the service's timeout and classifies its outcome. The wait ends
   * at the timeout even if the adapter ignores its signal: the call is then abandoned as unknown.
   */
  async call<T>(work: (options: ProviderCallOptions) => Promise<T>): Promise<ProviderOutcome<T>> {
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<ProviderOutcome<T>>((resolve) => {
      timer = setTimeout(() => {
        controller.abort();
        resolve({ kind: 'unknown', reason: `The provider did not answer within ${this.timeoutMs} ms` });
      }, this.timeoutMs);
    });
    const attempt = (async (): Promise<ProviderOutcome<T>> => {
      try {
        return { kind: 'done', value: await work({ signal: controller.signal }) };
      } catch (thrown) {
        if (thrown instanceof ProviderRefusal) return { kind: 'refused', reason: describe(thrown) };
        return { kind: 'unknown', reason: describe(thrown) };
      }
    })();
    try {
      return await Promise.race([attempt, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }
}

export { SandboxProvider };

import { type IncentiveProvider, type ProviderCallOptions, ProviderRefusal } from './provider.js';
import { SandboxProvider } from './sandbox.js';

export * from './provider.js';
/**
 * Tango Card, in the per-workspace factory shape `(settings) => IncentiveProvider`; not in
 * providerFactories below while those take no settings.
 */
export { TANGO_CREDENTIALS, TANGO_REQUIRED_CREDENTIALS, TANGO_WEBHOOK_SECRET_CREDENTIAL, type TangoSettings, createTangoProvider } from './tango/tango.js';

/**
 * Every provider the service can pay through, by the name INCENTIVE_PROVIDER takes. A new
 * provider is its adapter file and one line here (see provider.ts).
 */
export const providerFactories = {
  sandbox: (): IncentiveProvider => new SandboxProvider(),
} satisfies Record<string, () => IncentiveProvider>;

export type ProviderName = keyof typeof providerFactories;
export const providerNames = Object.keys(providerFactories) as ProviderName[];
export const DEFAULT_PROVIDER = 'sandbox' satisfies ProviderName;

/** How long the service waits for a provider call before treating its outcome as unknown. */
export const DEFAULT_PROVIDER_TIMEOUT_MS = 15_000;

/** A provider call's outcome: done, definitely refused, or unknown (timed out, connection lost, provider error). */
export type ProviderOutcome<T> = { kind: 'done'; value: T } | { kind: 'refused'; reason: string } | { kind: 'unknown'; reason: string };

const describe = (thrown: unknown) => (thrown instanceof Error ? thrown.message : String(thrown)).replaceAll('\u0000', '').slice(0, 1000);

/**
 * The providers of one process: the one new incentives are ordered from (`current`), and any
 * other an existing incentive was ordered from (each incentive remembers its provider, so a
 * change of INCENTIVE_PROVIDER leaves older incentives with theirs).
 */
export class IncentiveProviders {
  readonly current: ProviderName;
  readonly timeoutMs: number;
  private readonly instances = new Map<string, IncentiveProvider>();

  constructor(current: ProviderName = DEFAULT_PROVIDER, options: { timeoutMs?: number } = {}) {
    this.current = current;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_PROVIDER_TIMEOUT_MS;
  }

  get(name: string): IncentiveProvider {
    let provider = this.instances.get(name);
    if (!provider) {
      if (!Object.hasOwn(providerFactories, name)) throw new Error(`Incentive provider ${name} is not built into this service`);
      provider = providerFactories[name as ProviderName]();
      this.instances.set(name, provider);
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

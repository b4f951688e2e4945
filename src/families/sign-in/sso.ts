/**
 * Single sign-on with OpenID Connect (issue 36, item 2): a workspace names its identity provider
 * (an issuer, a client id and secret), and its users sign in to the console there.
 *
 * The flow is the authorization code flow with PKCE, state and nonce (openid-client, by the
 * author of the certified `oidc-provider`): GET /v1/session/oidc/start keeps an attempt (a row
 * found by the SHA-256 of a secret in a short-lived cookie, holding the state, nonce and code
 * verifier) and sends the browser to the provider; GET /v1/session/oidc/callback spends the
 * attempt once, exchanges the code, checks the ID token, and finds the user: by the provider's
 * subject when it signed in this way before, else by a verified address (an INVITED user so
 * accepts the invitation), else, when the address's domain is one the workspace named, a new
 * ACTIVE user of the workspace's chosen role (just-in-time membership). A DEACTIVATED user never
 * signs in. Any failure sends the browser back to the console's sign-in page with a reason code;
 * what the provider said goes to the server log only.
 *
 * The provider is reached from the server (discovery, keys, the token and userinfo endpoints):
 * its addresses pass the webhook targets' check (https, public addresses) unless the operator
 * allows plain http (OIDC_ALLOW_HTTP) or private addresses (OIDC_ALLOW_PRIVATE_ISSUERS, for an
 * identity provider on the intranet).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Configuration } from 'openid-client';
import type { Clock } from '../../clock.js';
import type { DB, SsoSettingsTable } from '../../db/schema.js';
import { badRequest, notFound } from '../../http/errors.js';
import { idPrefixes, newId } from '../../ids.js';
import type { CredentialBox } from '../../providers/credentials.js';
import { checkTargetUrl, type Resolver, systemResolver } from '../webhooks/targets.js';
import * as queries from './queries.js';
import { type StartedSession, startSession } from './service.js';

type OpenIdClient = typeof import('openid-client');
let clientModule: Promise<OpenIdClient> | undefined;
/** openid-client (and jose under it) load with the first sign-in by SSO, not at start. */
const loadClient = () => (clientModule ??= import('openid-client'));

export const SSO_ATTEMPT_MINUTES = 10;
export const ssoSecretsPurpose = 'recruit-ops single sign-on client secrets v1';
export const ssoFlowCookieName = 'recruit_sso';
export const ssoCallbackPath = '/v1/session/oidc/callback';
export const jitRoles = ['DEVELOPER', 'OBSERVER', 'RESEARCHER', 'OPS_MANAGER', 'COLLABORATOR'] as const;
export type JitRole = (typeof jitRoles)[number];

/** Why a sign-in by SSO did not happen: the code the console's sign-in page explains. */
export type SsoFailure = 'unavailable' | 'expired' | 'denied' | 'provider' | 'no_account' | 'unverified_email' | 'deactivated';

export class SsoFailed extends Error {
  override name = 'SsoFailed';
  constructor(
    readonly reason: SsoFailure,
    readonly detail?: unknown,
  ) {
    super(`single sign-on failed: ${reason}`);
  }
}

export interface SsoPolicy {
  allowHttp: boolean;
  allowPrivate: boolean;
  resolve?: Resolver;
}

export interface SsoSettingsView {
  issuer: string;
  clientId: string;
  clientSecretSet: boolean;
  jitDomains: string[];
  jitRole: JitRole;
  enabled: boolean;
  redirectUri: string;
  version: number;
  updatedAt: string;
}

export interface PutSsoSettings {
  issuer: string;
  clientId: string;
  /** Omitted: the secret set before is kept; null: none (a public client, PKCE only). */
  clientSecret?: string | null;
  jitDomains?: string[];
  jitRole?: JitRole;
  enabled?: boolean;
}

type SettingsRow = Pick<Selectable<SsoSettingsTable>, 'workspace_id' | 'issuer' | 'client_id' | 'client_secret_sealed' | 'jit_domains' | 'jit_role' | 'enabled' | 'version' | 'updated_at'>;

const digest = (secret: string) => createHash('sha256').update(secret, 'utf8').digest();
const FLOW_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** The domain part of an address, lower case. */
const domainOf = (email: string) => email.slice(email.lastIndexOf('@') + 1).toLowerCase();

/**
 * The service's single sign-on: the sealed client secrets, where providers may be, and each
 * workspace's discovered provider, kept 10 minutes (and dropped when its settings change, by
 * their version).
 */
export class SingleSignOn {
  private readonly configurations = new LRUCache<string, Promise<Configuration>>({ max: 1_000, ttl: 10 * 60_000 });

  constructor(
    private readonly box: CredentialBox,
    private readonly policy: SsoPolicy,
  ) {}

  /** Why the provider's URL may not be used, or undefined. */
  refusal(url: string): Promise<string | undefined> {
    return checkTargetUrl(url, { allowHttp: this.policy.allowHttp, allowPrivateTargets: this.policy.allowPrivate, resolve: this.policy.resolve ?? systemResolver });
  }

  present(row: SettingsRow, redirectUri: string): SsoSettingsView {
    return {
      issuer: row.issuer,
      clientId: row.client_id,
      clientSecretSet: row.client_secret_sealed !== null,
      jitDomains: [...row.jit_domains],
      jitRole: row.jit_role,
      enabled: row.enabled,
      redirectUri,
      version: row.version,
      updatedAt: new Date(row.updated_at).toISOString(),
    };
  }

  async getSettings(db: Kysely<DB>, workspaceId: string, redirectUri: string): Promise<SsoSettingsView> {
    const row = await queries.findSsoSettings(db, workspaceId);
    if (!row) throw notFound('Single sign-on settings', []);
    return this.present(row, redirectUri);
  }

  /**
   * Sets the workspace's provider: the issuer must pass the address check and serve a valid
   * discovery document (read now, so a typo is an answer rather than a failed sign-in later).
   */
  async putSettings(context: { db: Kysely<DB>; clock: Clock; workspaceId: string; userId: string }, body: PutSsoSettings, redirectUri: string): Promise<SsoSettingsView> {
    const issuer = body.issuer.replace(/\/+$/, '');
    const refused = await this.refusal(issuer);
    if (refused !== undefined) throw badRequest(`The issuer ${refused}`, ['issuer']);
    const jitDomains = [...new Set((body.jitDomains ?? []).map((domain) => domain.toLowerCase()))];
    const existing = await queries.findSsoSettings(context.db, context.workspaceId);
    const sealed =
      body.clientSecret === undefined
        ? (existing?.client_secret_sealed ?? null)
        : body.clientSecret === null
          ? null
          : this.box.seal({ clientSecret: body.clientSecret }, { workspaceId: context.workspaceId, provider: 'oidc' });
    const candidate: SettingsRow = {
      workspace_id: context.workspaceId,
      issuer,
      client_id: body.clientId,
      client_secret_sealed: sealed,
      jit_domains: jitDomains,
      jit_role: body.jitRole ?? 'OBSERVER',
      enabled: body.enabled ?? true,
      version: (existing?.version ?? 0) + 1,
      updated_at: context.clock.now().toISOString(),
    };
    try {
      await this.discover(candidate);
    } catch (error) {
      throw new SsoSettingsRefused(error);
    }
    this.configurations.delete(`${context.workspaceId}:${existing?.version ?? 0}`);
    const saved = await queries.upsertSsoSettings(context.db, { ...candidate, updated_by_user_id: context.userId });
    return this.present(saved, redirectUri);
  }

  async deleteSettings(db: Kysely<DB>, workspaceId: string): Promise<{ deleted: true }> {
    if (!(await queries.deleteSsoSettings(db, workspaceId))) throw notFound('Single sign-on settings', []);
    return { deleted: true };
  }

  /** The provider of these settings, discovered (and checked) once per version. */
  private configurationOf(row: SettingsRow): Promise<Configuration> {
    const key = `${row.workspace_id}:${row.version}`;
    let found = this.configurations.get(key);
    if (!found) {
      found = this.discover(row);
      found.catch(() => this.configurations.delete(key));
      this.configurations.set(key, found);
    }
    return found;
  }

  private async discover(row: SettingsRow): Promise<Configuration> {
    const client = await loadClient();
    const secret = row.client_secret_sealed === null ? undefined : this.box.open(row.client_secret_sealed, { workspaceId: row.workspace_id, provider: 'oidc' }).clientSecret;
    // Every request to the provider goes where the address check allows, without following redirects.
    const guardedFetch = async (url: string, options: RequestInit) => {
      const refused = await this.refusal(url);
      if (refused !== undefined) throw new Error(`The provider's URL ${url} ${refused}`);
      return fetch(url, { ...options, redirect: 'manual' });
    };
    const discovered = await client.discovery(new URL(row.issuer), row.client_id, undefined, undefined, {
      [client.customFetch]: guardedFetch as never,
      timeout: 10,
      execute: this.policy.allowHttp ? [client.allowInsecureRequests] : [],
    });
    const metadata = discovered.serverMetadata();
    const methods = metadata.token_endpoint_auth_methods_supported;
    // client_secret_basic is the specification's default; a provider that lists only client_secret_post gets that.
    const auth = secret === undefined ? client.None() : methods && !methods.includes('client_secret_basic') && methods.includes('client_secret_post') ? client.ClientSecretPost(secret) : client.ClientSecretBasic(secret);
    const configuration = new client.Configuration(metadata, row.client_id, undefined, auth);
    // The constructor carries none of discovery's options: the same fetch, timeout and (for tests and intranets) http.
    configuration[client.customFetch] = guardedFetch as never;
    configuration.timeout = 10;
    if (this.policy.allowHttp) client.allowInsecureRequests(configuration);
    return configuration;
  }

  /**
   * Begins a sign-in: keeps the attempt and answers where to send the browser, with the secret for
   * the flow cookie. An unknown workspace or one without (enabled) SSO: SsoFailed('unavailable').
   */
  async start(ownerDb: Kysely<DB>, clock: Clock, workspaceSlug: string, redirectUri: string): Promise<{ location: string; flowSecret: string }> {
    const workspace = await queries.findWorkspaceBySlug(ownerDb, workspaceSlug);
    const settings = workspace ? await queries.findSsoSettings(ownerDb, workspace.workspaceId) : undefined;
    if (!workspace || !settings || !settings.enabled) throw new SsoFailed('unavailable');
    let configuration: Configuration;
    try {
      configuration = await this.configurationOf(settings);
    } catch (error) {
      throw new SsoFailed('provider', error);
    }
    const client = await loadClient();
    const flowSecret = randomBytes(32).toString('base64url');
    const state = client.randomState();
    const nonce = client.randomNonce();
    const codeVerifier = client.randomPKCECodeVerifier();
    const at = clock.now();
    await queries.insertSsoAttempt(ownerDb, {
      workspace_id: workspace.workspaceId,
      attempt_id: newId(idPrefixes.ssoAttempt, at.getTime()),
      flow_sha256: digest(flowSecret),
      settings_version: settings.version,
      state,
      nonce,
      code_verifier: codeVerifier,
      redirect_uri: redirectUri,
      created_at: at.toISOString(),
      expires_at: new Date(at.getTime() + SSO_ATTEMPT_MINUTES * 60_000).toISOString(),
    });
    const location = client.buildAuthorizationUrl(configuration, {
      redirect_uri: redirectUri,
      scope: 'openid email profile',
      response_type: 'code',
      state,
      nonce,
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    });
    return { location: location.href, flowSecret };
  }

  /**
   * Ends a sign-in: spends the attempt of the flow cookie, checks the provider's answer, finds (or,
   * by just-in-time membership, makes) the user and starts a session. `query` is the callback's
   * query string as received.
   */
  async finish(ownerDb: Kysely<DB>, clock: Clock, flowSecret: string | undefined, query: URLSearchParams): Promise<StartedSession & { created: boolean }> {
    if (flowSecret === undefined || !FLOW_SHAPE.test(flowSecret)) throw new SsoFailed('expired');
    const at = clock.now().toISOString();
    const attempt = await queries.spendSsoAttempt(ownerDb, digest(flowSecret), at);
    if (!attempt) throw new SsoFailed('expired');
    if (query.has('error')) throw new SsoFailed('denied', { error: query.get('error'), description: query.get('error_description') });
    const settings = await queries.findSsoSettings(ownerDb, attempt.workspace_id);
    if (!settings || !settings.enabled) throw new SsoFailed('unavailable');
    const client = await loadClient();
    let claims: { sub: string; email?: unknown; email_verified?: unknown; name?: unknown };
    try {
      const configuration = await this.configurationOf(settings);
      const callbackUrl = new URL(attempt.redirect_uri);
      callbackUrl.search = query.toString();
      const tokens = await client.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: attempt.code_verifier,
        expectedState: attempt.state,
        expectedNonce: attempt.nonce,
        idTokenExpected: true,
      });
      const idClaims = tokens.claims();
      if (!idClaims) throw new Error('The provider answered no ID token');
      claims = { ...idClaims };
      // Many providers put the address in the userinfo answer only.
      if (typeof claims.email !== 'string') claims = { ...(await client.fetchUserInfo(configuration, tokens.access_token, idClaims.sub)), ...claims, sub: idClaims.sub };
    } catch (error) {
      throw new SsoFailed('provider', error);
    }
    const email = typeof claims.email === 'string' ? claims.email : undefined;
    const verified = claims.email_verified === true;
    const name = typeof claims.name === 'string' && claims.name.trim() !== '' ? claims.name.trim().slice(0, 200) : undefined;
    return ownerDb.transaction().execute(async (trx) => {
      const workspaceId = settings.workspace_id;
      const known = await queries.findUserBySsoIdentity(trx, workspaceId, settings.issuer, claims.sub);
      let user = known;
      let created = false;
      if (!user) {
        if (email === undefined || !verified) throw new SsoFailed('unverified_email');
        user = await queries.findUserByEmail(trx, workspaceId, email);
        if (!user) {
          if (!settings.jit_domains.includes(domainOf(email))) throw new SsoFailed('no_account');
          user = await queries.insertJitUser(trx, { workspaceId, email, fullname: name ?? email.split('@')[0]!, role: settings.jit_role, at });
          created = true;
        }
        await queries.insertSsoIdentity(trx, { workspaceId, issuer: settings.issuer, subject: claims.sub, userId: user.userId, at });
      }
      if (user.status === 'DEACTIVATED') throw new SsoFailed('deactivated');
      if (user.status === 'INVITED') {
        // Signing in through the workspace's provider accepts the invitation: the links emailed stop working.
        await queries.activateInvitedUser(trx, workspaceId, user.userId, at);
        await queries.deleteOpenLinks(trx, workspaceId, user.userId, 'INVITATION');
      }
      return { ...(await startSession(trx, { workspaceId, userId: user.userId }, 'OIDC', at)), created };
    });
  }
}

/** Settings whose provider could not be discovered: a 400 naming the issuer, the detail logged. */
export class SsoSettingsRefused extends Error {
  override name = 'SsoSettingsRefused';
  constructor(readonly detail: unknown) {
    super('the issuer could not be discovered');
  }
}

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type Configuration } from 'oidc-provider';

/**
 * A real OpenID Connect provider for the tests (`oidc-provider`, OpenID Certified), on loopback:
 * discovery, keys, the authorization, token and userinfo endpoints as a team's identity provider
 * has them. Its sign-in page is the package's development page: any login, any password; the
 * login is the account id, and the account's claims are what the test gave for it (else an
 * address equal to the login, verified).
 */
export interface TestIdentityProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The claims an account (a login) gets; unknown logins are verified addresses equal to the login. */
  accounts: Map<string, Record<string, unknown>>;
  close(): Promise<void>;
}

export async function startIdentityProvider(options: { redirectUris: string[]; clientId?: string; clientSecret?: string }): Promise<TestIdentityProvider> {
  const clientId = options.clientId ?? 'recruit-ops-test';
  const clientSecret = options.clientSecret ?? 'a-client-secret-of-the-test-provider';
  const accounts = new Map<string, Record<string, unknown>>();
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const configuration: Configuration = {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    cookies: { keys: ['a-cookie-key-of-the-test-provider'] },
    findAccount: async (_ctx, id) => ({
      accountId: id,
      claims: async () => ({ sub: id, email: id, email_verified: true, ...accounts.get(id) }),
    }),
    // Consent is granted as asked: the test is of the service, not of the provider's consent page.
    loadExistingGrant: async (ctx) => {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
    pkce: { required: () => true },
    // Lifetimes set, so that the provider does not print a notice for each default it uses.
    ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 600, IdToken: 600, Interaction: 600, Session: 600 },
  };
  const provider = new Provider(issuer, configuration);
  // The provider's development warnings are about its sign-in page, which is what a test wants.
  const handle = provider.callback();
  server.on('request', (request, response) => void handle(request, response));
  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Cookies of one site, as a browser keeps them (name → value), from Set-Cookie headers. */
class CookieJar {
  private readonly values = new Map<string, string>();
  take(response: Response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      const name = pair!.slice(0, at).trim();
      const value = pair!.slice(at + 1).trim();
      if (value === '' || /max-age=0/i.test(line) || /expires=Thu, 01 Jan 1970/i.test(line)) this.values.delete(name);
      else this.values.set(name, value);
    }
  }
  header(): string {
    return [...this.values].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/**
 * Does at the provider what a person does in a browser: opens the authorization URL, fills in
 * the sign-in page with `login`, and follows redirects until one leads to `callbackPrefix`;
 * answers that URL (the callback with its code and state), not followed.
 */
export async function signInAtProvider(authorizationUrl: string, login: string, callbackPrefix: string): Promise<URL> {
  const jar = new CookieJar();
  let url = new URL(authorizationUrl);
  let body: URLSearchParams | undefined;
  for (let step = 0; step < 20; step += 1) {
    if (url.href.startsWith(callbackPrefix)) return url;
    const response = await fetch(url, {
      method: body ? 'POST' : 'GET',
      redirect: 'manual',
      headers: { cookie: jar.header(), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(body ? { body } : {}),
    });
    jar.take(response);
    body = undefined;
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      url = new URL(location, url);
      continue;
    }
    const html = await response.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html);
    if (response.status !== 200 || !action || !html.includes('name="login"')) throw new Error(`The provider answered ${response.status} without its sign-in form: ${html.slice(0, 500)}`);
    url = new URL(action[1]!.replace(/&amp;/g, '&'), url);
    body = new URLSearchParams({ prompt: 'login', login, password: 'any password' });
  }
  throw new Error('The provider never sent the browser back');
}

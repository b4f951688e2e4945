import { describe, expect, it } from 'vitest';
import { setUserStatus } from '../src/families/workspaces/service.js';
import type { Right } from '../src/http/rights.js';
import { allRoles, assignableRights, rightsByRole } from '../src/http/rights.js';
import { call, createTenant, type Tenant, type TestService } from './harness.js';

export interface SecuredRequest {
  url: string;
  body?: unknown;
  query?: Record<string, string>;
  headers?: Record<string, string>;
}

export interface SecurityCase {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** The right the route must require. */
  right: Right;
  /**
   * Builds a request against resources of `tenant` (created here if the route addresses one) that
   * succeeds for a role holding the right: it must answer the route's documented success status.
   */
  request(tenant: Tenant, service: TestService): Promise<SecuredRequest>;
  /** The route addresses a resource of the workspace: another workspace's token must get 404. */
  addressesResource: boolean;
  /** The success status, for a route the OpenAPI document leaves out (the test helpers); documented routes take theirs from it. */
  success?: number;
}

interface DocumentedOperation {
  responses: Record<string, unknown>;
}
const documents = new WeakMap<object, { paths: Record<string, Record<string, DocumentedOperation>> }>();

/**
 * The success statuses (2xx) the OpenAPI document gives the operation that serves `method url`,
 * or undefined for a route it leaves out. The most specific path template wins (`/people/search`
 * over `/people/{personId}`), as in the router.
 */
export function documentedSuccess(service: TestService, method: string, url: string): number[] | undefined {
  let document = documents.get(service.app);
  if (!document) {
    document = service.app.swagger() as unknown as { paths: Record<string, Record<string, DocumentedOperation>> };
    documents.set(service.app, document);
  }
  const path = url.split('?')[0]!;
  const candidates = Object.entries(document.paths)
    .filter(([template, item]) => item[method.toLowerCase()] !== undefined && new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path))
    .sort(([a], [b]) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0));
  const operation = candidates[0]?.[1][method.toLowerCase()];
  if (!operation) return undefined;
  return Object.keys(operation.responses)
    .filter((status) => status.startsWith('2'))
    .map(Number);
}

/**
 * The security cases every authenticated route must pass: no token, a malformed or unknown
 * token, a deactivated user, every role without the right (403) and with it (the route's
 * documented success status: a 500, a 404 or a 409 there is a failure too), and another
 * workspace's token (404 for addressed resources).
 */
export function describeSecurity(name: string, service: () => TestService, spec: SecurityCase) {
  describe(`${name}: security`, () => {
    const send = (request: SecuredRequest, token?: string) =>
      call(service(), spec.method, request.url, { token, body: request.body, query: request.query, headers: request.headers });

    it('refuses a request without a token (401, plain text, rate-limit headers)', async () => {
      const tenant = await createTenant(service());
      const response = await send(await spec.request(tenant, service()));
      expect(response.statusCode).toBe(401);
      expect(response.headers['content-type']).toMatch(/^text\/plain/);
      expect(response.body).toBe('Unauthorized');
      expect(response.headers['x-ratelimit-limit']).toBeDefined();
      expect(response.headers['x-ratelimit-remaining']).toBeDefined();
      expect(response.headers['x-ratelimit-reset']).toBeDefined();
    });

    it('refuses a malformed, unknown or tampered token (401)', async () => {
      const tenant = await createTenant(service());
      const request = await spec.request(tenant, service());
      const tampered = tenant.token.slice(0, -2) + (tenant.token.endsWith('AA') ? 'BB' : 'AA');
      for (const token of ['nonsense', tampered, `rk_${tenant.workspaceId}_${'A'.repeat(43)}`]) {
        const response = await send(request, token);
        expect(response.statusCode, token).toBe(401);
        expect(response.body).toBe('Unauthorized');
      }
    });

    it("refuses a deactivated user's token (401)", async () => {
      const tenant = await createTenant(service());
      const request = await spec.request(tenant, service());
      const { token, userId } = await tenant.tokenFor('SUPER_ADMIN');
      await setUserStatus(service().deps.db, tenant.workspaceId, userId, 'DEACTIVATED');
      service().deps.principals.invalidateUser(tenant.workspaceId, userId);
      const response = await send(request, token);
      expect(response.statusCode).toBe(401);
    });

    const expectSuccess = async (response: { statusCode: number; body: string }, url: string, who: string) => {
      const documented = documentedSuccess(service(), spec.method, url);
      const success = documented ?? (spec.success === undefined ? undefined : [spec.success]);
      expect(success, `${spec.method} ${url}: a documented success status (or spec.success for an undocumented route)`).toBeDefined();
      if (spec.success !== undefined) expect(success, 'spec.success agrees with the document').toEqual([spec.success]);
      expect(success, `${who} holds ${spec.right}: ${response.body.slice(0, 300)}`).toContain(response.statusCode);
    };

    it(`enforces the right ${spec.right} for every role: 403 without it, the documented success with it`, async () => {
      for (const role of allRoles) {
        if (role === 'CUSTOM') continue;
        const tenant = await createTenant(service());
        const request = await spec.request(tenant, service());
        const { token } = await tenant.tokenFor(role);
        const response = await send(request, token);
        if (rightsByRole[role].includes(spec.right)) {
          await expectSuccess(response, request.url, role);
        } else {
          expect(response.statusCode, `${role} lacks ${spec.right}`).toBe(403);
          expect(response.body).toBe('Forbidden');
        }
      }
    });

    it(`enforces the right ${spec.right} for custom roles: the documented success with it alone, 403 with every other`, async () => {
      if (assignableRights.includes(spec.right)) {
        const tenant = await createTenant(service());
        const request = await spec.request(tenant, service());
        const { token } = await tenant.tokenFor('CUSTOM', {}, [spec.right]);
        await expectSuccess(await send(request, token), request.url, `A custom role of ${spec.right} alone`);
      }
      const tenant = await createTenant(service());
      const request = await spec.request(tenant, service());
      const { token } = await tenant.tokenFor(
        'CUSTOM',
        {},
        assignableRights.filter((right) => right !== spec.right),
      );
      const response = await send(request, token);
      expect(response.statusCode, `a custom role of every other right lacks ${spec.right}`).toBe(403);
      expect(response.body).toBe('Forbidden');
    });

    if (spec.addressesResource) {
      it("answers another workspace's token with 404, as if the resource did not exist", async () => {
        const owner = await createTenant(service());
        const stranger = await createTenant(service(), 'Other workspace');
        const request = await spec.request(owner, service());
        const response = await send(request, stranger.token);
        expect(response.statusCode).toBe(404);
        expect(response.json()).toMatchObject({ errors: [{ message: expect.stringMatching(/ not found$/) }] });
      });
    }
  });
}

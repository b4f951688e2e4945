import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateOpenApi, openApiPath } from '../../scripts/write-openapi.js';
import { generateSdkSources, sdkGeneratedDirectory } from '../../scripts/write-sdk-types.js';
import { createTenant, startTestService, type TestService } from '../../test/harness.js';
import { allRights, type Right, rolesWithRight } from './rights.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const httpMethods = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'] as const;

interface MediaType {
  schema?: JsonSchema;
  example?: unknown;
  examples?: unknown;
}
interface JsonSchema {
  $ref?: string;
  examples?: unknown[];
  [key: string]: unknown;
}
interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  requestBody?: { content?: Record<string, MediaType> };
  responses: Record<string, { description?: string; headers?: Record<string, unknown>; content?: Record<string, MediaType> }>;
  'x-required-right'?: string;
  'x-roles'?: string[];
  'x-reference-id'?: string;
}
interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  tags: { name: string; description?: string }[];
  paths: Record<string, Partial<Record<(typeof httpMethods)[number], Operation>>>;
  components: { schemas: Record<string, JsonSchema>; securitySchemes: Record<string, unknown> };
}

let service: TestService;
let served: OpenApiDocument;
let operations: { method: string; path: string; operation: Operation; name: string }[];

beforeAll(async () => {
  service = await startTestService();
  const response = await service.app.inject({ method: 'GET', url: '/v1/openapi.json' });
  expect(response.statusCode).toBe(200);
  served = response.json();
  operations = Object.entries(served.paths).flatMap(([route, item]) =>
    httpMethods.flatMap((method) => {
      const operation = item[method];
      return operation ? [{ method, path: route, operation, name: `${method.toUpperCase()} ${route}` }] : [];
    }),
  );
});
afterAll(async () => service.stop());

const resolve = (schema: JsonSchema | undefined): JsonSchema | undefined =>
  schema?.$ref ? served.components.schemas[schema.$ref.replace('#/components/schemas/', '')] : schema;

/** @fastify/swagger moves a schema's top-level `examples` to the media type's `example`. */
const mediaHasExamples = (media: MediaType | undefined) =>
  media !== undefined && (media.example !== undefined || media.examples !== undefined || (resolve(media.schema)?.examples?.length ?? 0) > 0);

describe('GET /v1/openapi.json', () => {
  it('is OpenAPI 3.1.0 with version 1.0, needs no token, and declares the bearer scheme', () => {
    expect(served.openapi).toBe('3.1.0');
    expect(served.info.version).toBe('1.0');
    expect(served.info.title).toBeTruthy();
    expect(served.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(operations.length).toBeGreaterThan(0);
  });

  it('gives every operation a unique operationId, a summary, a description and exactly one declared tag', () => {
    const declared = served.tags.map((tag) => tag.name);
    expect(new Set(declared).size).toBe(declared.length);
    const ids = operations.map(({ operation }) => operation.operationId);
    expect(new Set(ids).size, 'operationIds are unique').toBe(ids.length);
    const used = new Set<string>();
    for (const { name, operation } of operations) {
      expect(operation.operationId, name).toMatch(/^[a-z][A-Za-z0-9]+$/);
      expect(operation.summary?.trim(), name).toBeTruthy();
      expect(operation.description?.trim(), name).toBeTruthy();
      expect(operation.tags, name).toHaveLength(1);
      expect(declared, `${name}: tag ${operation.tags?.[0]}`).toContain(operation.tags?.[0]);
      used.add(operation.tags![0]!);
    }
    for (const tag of served.tags) {
      expect(tag.description?.trim(), tag.name).toBeTruthy();
      expect(used, `tag ${tag.name} has operations`).toContain(tag.name);
    }
  });

  it('gives every operation the security its x-required-right implies, the roles holding it, and the plain errors', () => {
    for (const { name, operation } of operations) {
      const right = operation['x-required-right'];
      if (right === undefined) {
        // Public to the bearer scheme: open to all, or the console's session cookie (the sign-in family's routes).
        expect([[], [{ sessionCookie: [] }]], `${name} is public or takes the session cookie`).toContainEqual(operation.security);
        continue;
      }
      expect(allRights, name).toContain(right);
      expect(operation.security, name).toEqual([{ bearerAuth: [] }]);
      expect(operation['x-roles'], name).toEqual(rolesWithRight(right as Right));
      for (const status of ['401', '403', '429', '500']) {
        expect(Object.keys(operation.responses[status]?.content ?? {}), `${name} ${status}`).toEqual(['text/plain']);
      }
      expect(Object.keys(operation.responses['429']!.headers ?? {}), name).toContain('Retry-After');
      const success = Object.keys(operation.responses).find((status) => status.startsWith('2'));
      expect(success, `${name} has a success response`).toBeDefined();
      expect(Object.keys(operation.responses[success!]!.headers ?? {}), name).toEqual(
        expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']),
      );
    }
  });

  it('documents what is enforced: operations with a bearer requirement answer 401 without a token, public ones do not', async () => {
    for (const { method, path: route, operation, name } of operations) {
      const url = `/v1${route.replace(/\{[^}]+\}/g, 'x')}`;
      const response = await service.app.inject({ method: method.toUpperCase() as 'GET', url });
      if (operation.security?.length) expect(response.statusCode, name).toBe(401);
      else expect(response.statusCode, name).not.toBe(401);
    }
  });

  it('shows examples in every operation, in its request body or its success response', () => {
    for (const { name, operation } of operations) {
      const body = operation.requestBody?.content?.['application/json'];
      const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'))?.[1];
      // A page for people (text/html, the unsubscribe page) and a download (text/csv) show their examples as JSON ones do.
      const response = success?.content?.['application/json'] ?? success?.content?.['text/html'] ?? success?.content?.['text/csv'];
      // A browser's step that answers a redirect (single sign-on) shows where it leads.
      const redirect = Object.entries(operation.responses).find(([status]) => status.startsWith('3'))?.[1] as { headers?: Record<string, { schema?: { examples?: unknown[] } }> } | undefined;
      const leadsSomewhere = (redirect?.headers?.Location?.schema?.examples?.length ?? 0) > 0;
      expect(mediaHasExamples(body) || mediaHasExamples(response) || (success === undefined && leadsSomewhere), `${name} has examples`).toBe(true);
    }
  });

  it('marks the reference operations with their x-reference-id, each id once', () => {
    const expected: Record<string, string> = {
      E2: 'POST /person/delete',
      E3: 'PATCH /studies/{studyId}',
      E4: 'POST /properties/import',
      E5: 'POST /studies/{studyId}/status',
      E8: 'POST /properties/delete',
      E9: 'GET /property-groups/{propertyGroupId}/properties',
      E10: 'GET /properties',
      E11: 'GET /property-groups',
      E12: 'GET /studies/{studyId}',
      E13: 'GET /incentives/{incentiveId}',
      E14: 'GET /me',
      E15: 'GET /person',
      E16: 'POST /incentives/{incentiveId}/resend',
      E17: 'POST /incentives/{incentiveId}/cancel',
      E18: 'GET /people/{personIdOrEmail}/opted-out',
      E19: 'POST /studies',
      E20: 'DELETE /properties/{propertyId}',
      E21: 'DELETE /studies/{studyId}/screener',
      E22: 'GET /populations',
      E23: 'POST /person',
    };
    const marked = operations.filter(({ operation }) => operation['x-reference-id'] !== undefined);
    const ids = marked.map(({ operation }) => operation['x-reference-id']!);
    expect(new Set(ids).size, 'each reference id marks one operation').toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^E([1-9]|1\d|2[0-3])$/);
    const byId = Object.fromEntries(marked.map(({ name, operation }) => [operation['x-reference-id'], name]));
    for (const [id, name] of Object.entries(expected)) expect(byId[id], id).toBe(name);
  });

  it('leaves the test-helper routes out, even when they are enabled', () => {
    expect(service.deps.config.testHelpers).toBe(true);
    expect(Object.keys(served.paths).filter((route) => route.startsWith('/test-helpers'))).toEqual([]);
  });
});

describe('openapi.json (committed)', () => {
  it('equals the document the service generates now', async () => {
    const hint = 'openapi.json is out of date with the route schemas: run `npm run openapi` and commit the result';
    expect(existsSync(openApiPath), hint).toBe(true);
    const generated = await generateOpenApi();
    expect(readFileSync(openApiPath, 'utf8'), hint).toBe(generated);
    // The running service serves the same operations and schemas (the store and TEST_HELPERS change nothing).
    const document = JSON.parse(generated) as OpenApiDocument;
    expect(served.paths).toEqual(document.paths);
    expect(served.components).toEqual(document.components);
  });

  it("has the SDK's generated sources (sdk/src/generated/) committed as the generator writes them from it", async () => {
    const hint =
      'sdk/src/generated/ is out of date with openapi.json: run `npm run openapi` (or, to regenerate from the committed openapi.json alone, ' +
      '`npx tsx scripts/write-sdk-types.ts`) and commit the result; never edit the generated files';
    const expected = await generateSdkSources(readFileSync(openApiPath, 'utf8'));
    for (const [file, text] of Object.entries(expected)) {
      const committed = path.join(repoRoot, file);
      expect(existsSync(committed), `${file}: ${hint}`).toBe(true);
      // Compared as a boolean first: a diff of 12,000 generated lines would bury the hint.
      const same = readFileSync(committed, 'utf8') === text;
      expect(same, `${file} differs from the generator's output. ${hint}`).toBe(true);
    }
    expect(readdirSync(sdkGeneratedDirectory).sort(), `only generated files in sdk/src/generated/. ${hint}`).toEqual(
      Object.keys(expected).map((file) => path.basename(file)).sort(),
    );
  });

  it('passes Redocly lint (recommended, with the stricter rules of redocly.yaml) without errors', async () => {
    const config = readFileSync(path.join(repoRoot, 'redocly.yaml'), 'utf8');
    expect(config).toMatch(/^extends:\s*\n\s*-\s*recommended\s*$/m);
    // A rule may be turned off only with a comment that says why.
    const lines = config.split('\n');
    lines.forEach((line, index) => {
      if (/^\s+[\w-]+:\s*(off|\{[^}]*severity:\s*off)/.test(line) || /^\s+severity:\s*off/.test(line)) {
        expect(`${lines[index - 1] ?? ''}${line}`, `redocly.yaml line ${index + 1} turns a rule off without a reason`).toMatch(/#/);
      }
    });

    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((done, fail) => {
      const child = spawn(path.join(repoRoot, 'node_modules', '.bin', 'redocly'), ['lint', 'openapi.json', '--format=json', '--lint-config=error'], {
        cwd: repoRoot,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      child.on('error', fail);
      child.on('close', (code) => done({ code, stdout, stderr }));
    });
    let report: { totals: { errors: number; warnings: number }; problems: { ruleId: string; severity: string; message: string; location: { pointer?: string }[] }[] };
    try {
      report = JSON.parse(result.stdout);
    } catch {
      throw new Error(`redocly printed no JSON report (exit ${result.code}):\n${result.stderr}`);
    }
    const problems = report.problems.map((problem) => `${problem.severity} ${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer ?? '?'}`);
    expect(report.totals.errors, problems.join('\n')).toBe(0);
    expect(result.code, result.stderr).toBe(0);
  });
});

describe('GET /docs', () => {
  it('serves the interactive reference and every asset it loads from this server, and nothing from outside', async () => {
    const page = await service.app.inject({ method: 'GET', url: '/docs' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const html = page.body;
    expect(html).toContain('id="swagger-ui"');
    expect(html, 'no absolute or protocol-relative URL in the page').not.toMatch(/(https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/i);

    // Content-Security-Policy: the browser may load nothing from anywhere but this server.
    const csp = String(page.headers['content-security-policy'] ?? '');
    expect(csp).toMatch(/default-src 'self'/);
    for (const directive of csp.split(';').map((part) => part.trim()).filter(Boolean)) {
      for (const source of directive.split(/\s+/).slice(1)) expect(["'self'", "'none'", 'data:'], `${directive}`).toContain(source);
    }

    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
    expect(assets.some((asset) => asset.endsWith('.js'))).toBe(true);
    expect(assets.some((asset) => asset.endsWith('.css'))).toBe(true);
    for (const asset of assets) {
      const url = new URL(asset, 'http://localhost/docs').pathname;
      expect(url.startsWith('/docs/'), asset).toBe(true);
      const response = await service.app.inject({ method: 'GET', url });
      expect(response.statusCode, asset).toBe(200);
      expect(response.rawPayload.length, asset).toBeGreaterThan(0);
      const type = String(response.headers['content-type']);
      if (asset.endsWith('.js')) expect(type, asset).toMatch(/javascript/);
      if (asset.endsWith('.css')) expect(type, asset).toMatch(/^text\/css/);
      if (asset.endsWith('.png')) expect(type, asset).toMatch(/^image\/png/);
    }
  });

  it('points the page at this server\'s document, with the external validator badge off', async () => {
    const initializer = await service.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
    expect(initializer.statusCode).toBe(200);
    expect(initializer.body).toMatch(/validatorUrl:\s*null/);
    const url = /url:\s*resolveUrl\('\.\/([^']+)'\)/.exec(initializer.body)?.[1];
    expect(url).toBe('json');
    const document = await service.app.inject({ method: 'GET', url: `/docs/${url}` });
    expect(document.statusCode).toBe(200);
    expect(document.json()).toEqual(served);
  });
});

describe('the server of the document the interactive reference uses', () => {
  /** What the page at /docs does: read its initializer, then the document at the URL it names, resolved as the browser would. */
  async function documentOfThePage(origin: string) {
    const pageUrl = `${origin}/docs`;
    const initializer = await (await fetch(`${pageUrl}/static/swagger-initializer.js`)).text();
    const relative = /url:\s*resolveUrl\('([^']+)'\)/.exec(initializer)?.[1];
    expect(relative).toBeDefined();
    // resolveUrl: the page's address with a trailing slash, then the relative URL.
    const documentUrl = new URL(relative!, `${pageUrl}/`).href;
    const response = await fetch(documentUrl);
    expect(response.status).toBe(200);
    return { documentUrl, document: (await response.json()) as { servers: { url: string }[] } };
  }

  it('without PUBLIC_URL is relative (/v1), so "Try it out" reaches the server it was read from, on any host and port', async () => {
    const listening = await startTestService({ publicUrl: undefined });
    try {
      const tenant = await createTenant(listening);
      const origin = await listening.app.listen({ port: 0, host: '127.0.0.1' });
      expect(origin).not.toMatch(/:8080$/);
      const { documentUrl, document } = await documentOfThePage(origin);
      expect(document.servers).toEqual([expect.objectContaining({ url: '/v1' })]);
      // Swagger UI resolves a relative server URL against the document's URL.
      const base = new URL(document.servers[0]!.url, documentUrl).href;
      expect(base).toBe(`${origin}/v1`);
      const me = await fetch(`${base}/me`, { headers: { authorization: `Bearer ${tenant.token}` } });
      expect(me.status).toBe(200);
      expect(((await me.json()) as { workspaceId: string }).workspaceId).toBe(tenant.workspaceId);
      // The same document at /v1/openapi.json, and the committed one says the same.
      expect(((await (await fetch(`${base}/openapi.json`)).json()) as { servers: unknown }).servers).toEqual(document.servers);
      expect((JSON.parse(readFileSync(openApiPath, 'utf8')) as { servers: unknown }).servers).toEqual(document.servers);
    } finally {
      await listening.stop();
    }
  });

  it('with PUBLIC_URL is that origin with /v1 (a trailing slash dropped)', async () => {
    for (const publicUrl of ['https://recruit.example.org', 'https://recruit.example.org/']) {
      const configured = await startTestService({ publicUrl });
      try {
        const response = await configured.app.inject({ method: 'GET', url: '/docs/json' });
        expect(response.json<{ servers: { url: string }[] }>().servers.map((server) => server.url)).toEqual(['https://recruit.example.org/v1']);
        const served = await configured.app.inject({ method: 'GET', url: '/v1/openapi.json' });
        expect(served.json<{ servers: { url: string }[] }>().servers.map((server) => server.url)).toEqual(['https://recruit.example.org/v1']);
      } finally {
        await configured.stop();
      }
    }
  });
});

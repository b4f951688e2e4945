import type { Readable } from 'node:stream';
import { expect } from 'vitest';
import { call, callTestHelper, type Tenant, type TestService } from '../../../test/harness.js';

export interface ImportResponse {
  importId: string;
  status: string;
  rowsTotal: number;
  rowsImported: number;
  rowsFailed: number;
  errors: { row: number; message: string }[];
}

/** POST /imports with a CSV body (text, bytes, or a stream that delivers it in pieces); answers the raw response. */
export function postCsv(service: TestService, token: string, csv: string | Buffer | Readable, query?: Record<string, string>, contentType = 'text/csv') {
  return call(service, 'POST', '/imports', { token, body: csv, query, headers: { 'content-type': contentType } });
}

/** Posts a CSV that must be accepted; answers its import id. */
export async function startImport(service: TestService, tenant: Tenant, csv: string | Buffer | Readable, query?: Record<string, string>): Promise<string> {
  const response = await postCsv(service, tenant.token, csv, query);
  expect(response.statusCode, response.body).toBe(202);
  expect(response.json()).toEqual({ importId: expect.stringMatching(/^imp_/), status: 'QUEUED' });
  return response.json<{ importId: string }>().importId;
}

export async function readImport(service: TestService, tenant: Tenant, importId: string): Promise<ImportResponse> {
  const response = await call(service, 'GET', `/imports/${importId}`, { token: tenant.token });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<ImportResponse>();
}

/** Runs the tenant's due background work (its own workspace's alone: other files share the database). */
export async function runJobs(service: TestService, tenant: Tenant) {
  const response = await callTestHelper(service, 'POST', '/jobs/run', { query: { workspaceId: tenant.workspaceId } });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ jobs: { jobId: string; queue: string; outcome: string; error?: string }[] }>();
}

/** The workspace's live people, by lower-cased email. */
export async function peopleByEmail(service: TestService, workspaceId: string) {
  const rows = await service.deps.db
    .selectFrom('people')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('deleted_at', 'is', null)
    .orderBy('person_id')
    .execute();
  return new Map(rows.map((row) => [row.email!.toLowerCase(), row]));
}

/** Rows of a CSV, each cell quoted when it needs to be. */
export function csvOf(rows: (string | number)[][]): string {
  const cell = (value: string | number) => {
    const text = String(value);
    return /[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
  };
  return rows.map((row) => row.map(cell).join(',')).join('\r\n') + '\r\n';
}

/**
 * Runs the tenant's due jobs, its import's among them, and reads the import. Only runs of this
 * workspace claim its jobs, so the drain returns with the import done.
 */
export async function settleImport(service: TestService, tenant: Tenant, importId: string): Promise<ImportResponse> {
  await runJobs(service, tenant);
  return readImport(service, tenant, importId);
}

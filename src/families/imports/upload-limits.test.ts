import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestService, type TestService } from '../../../test/harness.js';
import { postCsv, startImport } from './test-support.js';

// Issue 32: a file might be 2 GiB, and any number of uploads were received at once.
let service: TestService;
beforeAll(async () => {
  service = await startTestService({ importMaxBytes: 4096, importUploadsPerWorkspace: 1, importUploadsPerProcess: 2 });
});
afterAll(async () => service.stop());

const header = 'email,firstName\n';
const rows = (count: number) => header + Array.from({ length: count }, (_, i) => `p${i}@example.org,P${i}\n`).join('');

/** An upload that has sent its header and waits: received, not finished. */
function openUpload(token: string) {
  const body = new PassThrough();
  body.write(header);
  const answer = postCsv(service, token, body);
  return { answer, finish: () => body.end('last@example.org,Last\n') };
}

describe('POST /imports: limits of size and of uploads at once', () => {
  it('refuses a file over IMPORT_MAX_BYTES with a 413 naming the limit, streamed or announced; nothing imported', async () => {
    const tenant = await createTenant(service);
    const big = rows(400);
    expect(Buffer.byteLength(big)).toBeGreaterThan(4096);
    const announced = await postCsv(service, tenant.token, big);
    expect(announced.statusCode, announced.body).toBe(413);
    expect(announced.json()).toEqual({ errors: [{ message: "The CSV file is larger than the limit of 4,096 bytes (the instance's IMPORT_MAX_BYTES)", path: [] }] });
    const streamed = new PassThrough();
    const answer = postCsv(service, tenant.token, streamed);
    for (let i = 0; i < 20; i++) streamed.write(rows(20));
    streamed.end();
    const response = await answer;
    expect(response.statusCode, response.body).toBe(413);
    expect(response.json<{ errors: { message: string }[] }>().errors[0]!.message).toMatch(/limit of 4,096 bytes/);
    expect(await service.database.db.selectFrom('imports').select('import_id').where('workspace_id', '=', tenant.workspaceId).execute()).toEqual([]);
    // Under the limit is taken.
    await startImport(service, tenant, rows(3));
  });

  it('receives one upload per workspace and two per process at once; past either a 429 with Retry-After, and the slot is given back', async () => {
    const [first, second, third] = [await createTenant(service), await createTenant(service), await createTenant(service)];
    const one = openUpload(first.token);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const again = await postCsv(service, first.token, rows(1));
    expect(again.statusCode).toBe(429);
    expect(Number(again.headers['retry-after'])).toBeGreaterThan(0);
    expect(again.body).toBe('Too Many Requests');
    const two = openUpload(second.token);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await postCsv(service, third.token, rows(1))).statusCode).toBe(429);
    one.finish();
    two.finish();
    expect((await one.answer).statusCode).toBe(202);
    expect((await two.answer).statusCode).toBe(202);
    await startImport(service, first, rows(1));
    await startImport(service, third, rows(1));
  });
});

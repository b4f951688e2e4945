import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type TestService } from '../../../test/harness.js';
import * as eventQueries from '../events/queries.js';
import * as participantQueries from '../participants/queries.js';
import { studyExists } from './queries.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

describe('studyExists', () => {
  it('is one function, in the studies family (the participants family re-exports it for the search modules)', () => {
    expect(participantQueries.studyExists).toBe(studyExists);
    expect(Object.keys(eventQueries)).not.toContain('studyExists');
  });

  it("finds a study of the workspace, and neither another workspace's nor an unknown one", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other');
    const created = await call(service, 'POST', '/studies', {
      token: tenant.token,
      body: { studyType: 'SURVEY', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Exists' } },
    });
    expect(created.statusCode, created.body).toBe(201);
    const { studyId } = created.json<{ studyId: string }>();
    expect(await studyExists(service.deps.db, tenant.workspaceId, studyId)).toBe(true);
    expect(await studyExists(service.deps.db, other.workspaceId, studyId)).toBe(false);
    expect(await studyExists(service.deps.db, tenant.workspaceId, 'stu_unknown')).toBe(false);
  });
});

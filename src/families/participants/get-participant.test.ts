import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type TestService } from '../../../test/harness.js';
import { createPerson } from '../../../test/people-factory.js';
import { addParticipants, createStudy, getParticipant, patchParticipant } from '../../../test/participants-factory.js';
import { describeSecurity } from '../../../test/security.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

describe('GET /studies/{studyId}/participants/{participantId}', () => {
  it('reads the participant as the last write answered it', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(service, tenant, { studyType: 'INTERVIEWS', launch: true });
    const person = await createPerson(service, tenant, { phone: '+44 1', additionalPhones: ['+44 2'] });
    const [added] = await addParticipants(service, tenant, studyId, [person.personId]);
    const written = await patchParticipant(service, tenant, studyId, added!.participantId, {
      status: 'SCHEDULED',
      interviewStartTime: '2026-12-01T10:00:00.000Z',
      note: 'Bring the prototype',
      quotaGroup: 'Returning',
    });
    const response = await getParticipant(service, tenant, studyId, added!.participantId);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual(written);
    expect(response.json()).toMatchObject({
      email: person.email,
      phone: '+44 1',
      additionalPhones: ['+44 2'],
      status: 'SCHEDULED',
      note: { note: 'Bring the prototype', createdByUserId: tenant.userId },
    });
  });

  it('shows the contact details as they are now, and masks them without the personal-data right', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(service, tenant, { studyType: 'SURVEY' });
    const person = await createPerson(service, tenant, { phone: '+44 1', additionalEmails: ['x@example.org'] });
    const [added] = await addParticipants(service, tenant, studyId, [person.personId]);
    expect((await call(service, 'PATCH', `/people/${person.personId}`, { token: tenant.token, body: { phone: '+44 9' } })).statusCode).toBe(200);
    expect((await getParticipant(service, tenant, studyId, added!.participantId)).json().phone).toBe('+44 9');
    const { token } = await tenant.tokenFor('OBSERVER', { canReadPersonalData: false });
    const masked = await getParticipant(service, tenant, studyId, added!.participantId, token);
    expect(masked.statusCode).toBe(200);
    expect(masked.json()).toMatchObject({ email: '***@***', phone: '***', additionalEmails: ['***@***'], additionalPhones: [] });
    expect(masked.body).not.toContain(person.email);
  });

  it('answers 404 naming the study or the participant', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(service, tenant, { studyType: 'SURVEY' });
    const otherStudy = await createStudy(service, tenant, { studyType: 'SURVEY' });
    const person = await createPerson(service, tenant);
    const [added] = await addParticipants(service, tenant, studyId, [person.personId]);
    const unknownStudy = await getParticipant(service, tenant, 'stu_unknown', added!.participantId);
    expect(unknownStudy.statusCode).toBe(404);
    expect(unknownStudy.json()).toEqual({ errors: [{ message: 'Study not found', path: ['studyId'] }] });
    for (const [study, participant] of [
      [studyId, 'ptc_unknown'],
      [otherStudy, added!.participantId],
    ]) {
      const response = await getParticipant(service, tenant, study!, participant!);
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message: 'Participant not found', path: ['participantId'] }] });
    }
  });

  it('answers 404 once the person is deleted', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(service, tenant, { studyType: 'SURVEY' });
    const person = await createPerson(service, tenant);
    const [added] = await addParticipants(service, tenant, studyId, [person.personId]);
    expect((await call(service, 'DELETE', `/people/${person.personId}`, { token: tenant.token })).statusCode).toBe(200);
    const response = await getParticipant(service, tenant, studyId, added!.participantId);
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ errors: [{ message: 'Participant not found', path: ['participantId'] }] });
  });

  it('refuses a malformed path parameter (400)', async () => {
    const tenant = await createTenant(service);
    const response = await call(service, 'GET', `/studies/stu_1/participants/${'x'.repeat(201)}`, { token: tenant.token });
    expect(response.statusCode).toBe(400);
    expect(response.json().errors[0].path).toEqual(['participantId']);
  });
});

describeSecurity('GET /studies/{studyId}/participants/{participantId}', () => service, {
  method: 'GET',
  right: 'participants:read',
  addressesResource: true,
  request: async (tenant, svc) => {
    const studyId = await createStudy(svc, tenant, { studyType: 'SURVEY' });
    const person = await createPerson(svc, tenant);
    const [participant] = await addParticipants(svc, tenant, studyId, [person.personId]);
    return { url: `/studies/${studyId}/participants/${participant!.participantId}` };
  },
});

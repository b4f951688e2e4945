import { expect } from 'vitest';
import { call, callTestHelper, type Tenant, type TestService } from '../../../test/harness.js';
import { addParticipants, createStudy } from '../../../test/participants-factory.js';
import { createPerson } from '../../../test/people-factory.js';

export const invitation = {
  name: 'Invitation',
  subject: 'Join {{ study.externalName }}, {{ person.firstName | default: "friend" }}',
  textBody: 'Hi {{ person.fullName }}, {{ workspace.name }} invites you to {{ study.externalName }}.\nUnsubscribe: {{ links.unsubscribe }}',
  htmlBody: '<p>Hi {{ person.firstName }}: {{ study.externalName }}</p><a href="{{ links.unsubscribe }}">Unsubscribe</a>',
};

export async function createTemplate(service: TestService, tenant: Tenant, body: object = invitation): Promise<string> {
  const response = await call(service, 'POST', '/message-templates', { token: tenant.token, body });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ templateId: string }>().templateId;
}

/** A study with one participant per person given (by email, first name). */
export async function studyWith(service: TestService, tenant: Tenant, people: { email: string; firstName?: string }[]) {
  const studyId = await createStudy(service, tenant, { studyType: 'INTERVIEWS', launch: true, studyPlan: { externalName: 'Paying online' } });
  const persons = [];
  for (const person of people) persons.push(await createPerson(service, tenant, person));
  const participants = await addParticipants(
    service,
    tenant,
    studyId,
    persons.map((person) => person.personId),
  );
  return { studyId, persons, participants };
}

export interface MailRunReport {
  attempted: number;
  sent: number;
  retrying: number;
  failed: number;
  notSent: number;
}

/** POST /test-helpers/mail/run for the tenant's workspace. */
export async function runMail(service: TestService, tenant: Tenant): Promise<MailRunReport> {
  const response = await callTestHelper(service, 'POST', '/mail/run', { query: { workspaceId: tenant.workspaceId } });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<MailRunReport>();
}

export async function sendMessages(service: TestService, tenant: Tenant, studyId: string, body: object, token = tenant.token) {
  return call(service, 'POST', `/studies/${studyId}/messages`, { token, body });
}

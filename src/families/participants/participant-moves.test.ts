import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { createPerson } from '../../../test/people-factory.js';
import {
  addParticipants,
  createStudy,
  getParticipant,
  participantRow,
  patchParticipant,
  patchParticipantResponse,
  statusEventsOf,
} from '../../../test/participants-factory.js';
import type { ParticipantApprovalStatus, ParticipantScreenerState, ParticipantStatus } from '../../db/schema.js';
import { approvalMoves, approvalStatuses, participantStatuses, screenerMoves, screenerStates, sessionStatuses, statusMoves } from './states.js';

/*
 * The state tables of states.ts, driven row by row through PATCH: every move a table allows is
 * accepted (and recorded as one event), every move it does not allow is refused with 409 and
 * changes nothing. The cases are generated from the tables, so changing a table changes the tests.
 */

let service: TestService;
let tenant: Tenant;
const studies = { INTERVIEW: '', TEST: '' };

beforeAll(async () => {
  service = await startTestService();
  tenant = await createTenant(service);
  studies.INTERVIEW = await createStudy(service, tenant, { studyType: 'INTERVIEWS', screener: true, launch: true });
  studies.TEST = await createStudy(service, tenant, { studyType: 'UNMODERATED_TEST', screener: true, launch: true });
});
afterAll(async () => service.stop());

type Kind = keyof typeof studies;
type Step = Record<string, unknown>;

const START = '2026-12-01T10:00:00.000Z';
const RESCHEDULED = '2026-12-02T15:30:00.000Z';
const scheduled: Step = { status: 'SCHEDULED', interviewStartTime: START };
const invited: Step = { status: 'INVITED' };

/** How a new participant reaches each status in each kind of study (HIDDEN: reach the status, then hide). */
const statusRecipes: Record<Kind, Partial<Record<ParticipantStatus, Step[]>>> = {
  INTERVIEW: {
    NOT_STARTED: [],
    INVITED: [invited],
    SCHEDULED: [scheduled],
    COMPLETED: [scheduled, { status: 'COMPLETED' }],
    NO_SHOW: [scheduled, { status: 'NO_SHOW' }],
    CANCELED: [{ status: 'CANCELED' }],
  },
  TEST: {
    NOT_STARTED: [],
    INVITED: [invited],
    COMPLETED: [invited, { status: 'COMPLETED' }],
    CANCELED: [{ status: 'CANCELED' }],
  },
};

/** Whether a move of the table applies in a kind of study: sessions are for interviews, and an interview completes from SCHEDULED. */
const appliesIn = (kind: Kind, from: ParticipantStatus, to: ParticipantStatus) =>
  kind === 'INTERVIEW' ? !(from === 'INVITED' && to === 'COMPLETED') : !sessionStatuses.includes(from) && !sessionStatuses.includes(to);

async function newParticipant(kind: Kind, steps: Step[]) {
  const person = await createPerson(service, tenant);
  const [participant] = await addParticipants(service, tenant, studies[kind], [person.personId]);
  for (const step of steps) await patchParticipant(service, tenant, studies[kind], participant!.participantId, step);
  return participant!.participantId;
}

const statusOf = async (kind: Kind, participantId: string) => (await getParticipant(service, tenant, studies[kind], participantId)).json();

async function expectRefused(kind: Kind, participantId: string, body: Step, path: string[], message: RegExp | string) {
  const before = await statusOf(kind, participantId);
  const eventCount = (await statusEventsOf(service, tenant, participantId)).length;
  const response = await patchParticipantResponse(service, tenant, studies[kind], participantId, body);
  expect(response.statusCode, `${JSON.stringify(body)}: ${response.body}`).toBe(409);
  const errors = response.json<{ errors: { message: string; path: string[] }[] }>().errors;
  expect(errors).toHaveLength(1);
  expect(errors[0]!.path).toEqual(path);
  expect(errors[0]!.message).toMatch(message);
  expect(await statusOf(kind, participantId)).toEqual(before);
  expect(await statusEventsOf(service, tenant, participantId)).toHaveLength(eventCount);
}

async function expectLastEvent(participantId: string, field: string, from: string, to: string, isContact: boolean) {
  const events = await statusEventsOf(service, tenant, participantId);
  expect(events.at(-1)).toMatchObject({ field, from_value: from, to_value: to, is_contact: isContact, user_id: tenant.userId });
}

const statusesFrom = Object.keys(statusMoves) as (keyof typeof statusMoves)[];

describe('status moves', () => {
  for (const kind of ['INTERVIEW', 'TEST'] as const) {
    describe(`in ${kind === 'INTERVIEW' ? 'an interview study' : 'an unmoderated test'}`, () => {
      for (const from of statusesFrom) {
        const recipe = statusRecipes[kind][from];
        if (!recipe) continue;
        for (const to of statusMoves[from].filter((target) => appliesIn(kind, from, target))) {
          it(`allows ${from} → ${to}, recorded as one event`, async () => {
            const participantId = await newParticipant(kind, recipe);
            const before = (await statusEventsOf(service, tenant, participantId)).length;
            const body: Step = to === 'SCHEDULED' ? { status: to, interviewStartTime: from === 'NO_SHOW' ? RESCHEDULED : START } : { status: to };
            const participant = await patchParticipant(service, tenant, studies[kind], participantId, body);
            expect(participant.status).toBe(to);
            expect(participant.statusBeforeHidden).toBe(to === 'HIDDEN' ? from : null);
            expect(await statusEventsOf(service, tenant, participantId)).toHaveLength(before + 1);
            await expectLastEvent(participantId, 'status', from, to, to === 'INVITED');
            expect((await participantRow(service, tenant, participantId)).status_before_hidden).toBe(to === 'HIDDEN' ? from : null);
          });
        }

        const refused = participantStatuses.filter((to) => to !== from && !statusMoves[from].includes(to));
        if (refused.length > 0) {
          it(`refuses ${from} → ${refused.join(', ')} (409, nothing changes)`, async () => {
            const participantId = await newParticipant(kind, recipe);
            for (const to of refused) {
              const body: Step = to === 'SCHEDULED' ? { status: to, interviewStartTime: START } : { status: to };
              await expectRefused(kind, participantId, body, ['status'], `status cannot move from ${from} to ${to}`);
            }
          });
        }

        it(`hides a participant who is ${from}; they can only return to ${from} (no new contact)`, async () => {
          const participantId = await newParticipant(kind, [...recipe, { status: 'HIDDEN' }]);
          expect((await participantRow(service, tenant, participantId)).status_before_hidden).toBe(from);
          for (const to of participantStatuses.filter((status) => status !== from && status !== 'HIDDEN')) {
            await expectRefused(kind, participantId, { status: to }, ['status'], `A HIDDEN participant can only return to the status they had, ${from}`);
          }
          // The API says where unhiding may go.
          expect((await statusOf(kind, participantId)).statusBeforeHidden).toBe(from);
          const participant = await patchParticipant(service, tenant, studies[kind], participantId, { status: from });
          expect(participant.status).toBe(from);
          expect(participant.statusBeforeHidden).toBeNull();
          await expectLastEvent(participantId, 'status', 'HIDDEN', from, false);
          expect((await participantRow(service, tenant, participantId)).status_before_hidden).toBeNull();
        });
      }
    });
  }
});

const approvalRecipes: Record<ParticipantApprovalStatus, Step[]> = {
  PENDING_REVIEW: [],
  APPROVED: [{ approvalStatus: 'APPROVED' }],
  REJECTED: [{ approvalStatus: 'REJECTED' }],
};

describe('approval status moves', () => {
  for (const from of approvalStatuses) {
    for (const to of approvalMoves[from]) {
      it(`allows ${from} → ${to}, recorded as one event`, async () => {
        const participantId = await newParticipant('INTERVIEW', approvalRecipes[from]);
        const participant = await patchParticipant(service, tenant, studies.INTERVIEW, participantId, { approvalStatus: to });
        expect(participant.approvalStatus).toBe(to);
        await expectLastEvent(participantId, 'approvalStatus', from, to, false);
        if (to === 'APPROVED') expect(participant.approvedAt).not.toBeNull();
      });
    }
    const refused = approvalStatuses.filter((to) => to !== from && !approvalMoves[from].includes(to));
    if (refused.length > 0) {
      it(`refuses ${from} → ${refused.join(', ')} (409)`, async () => {
        const participantId = await newParticipant('INTERVIEW', approvalRecipes[from]);
        for (const to of refused) await expectRefused('INTERVIEW', participantId, { approvalStatus: to }, ['approvalStatus'], `approvalStatus cannot move from ${from} to ${to}`);
      });
    }
  }
});

const screenerRecipes: Record<ParticipantScreenerState, Step[]> = {
  NOT_SENT: [],
  SCREENER_SENT: [{ screenerState: 'SCREENER_SENT' }],
  SUBMITTED: [{ screenerState: 'SCREENER_SENT' }, { screenerState: 'SUBMITTED' }],
  QUALIFIED: [{ screenerState: 'SCREENER_SENT' }, { screenerState: 'SUBMITTED' }, { screenerState: 'QUALIFIED' }],
  DISQUALIFIED: [{ screenerState: 'SCREENER_SENT' }, { screenerState: 'SUBMITTED' }, { screenerState: 'DISQUALIFIED' }],
};

describe('screener state moves', () => {
  for (const from of screenerStates) {
    for (const to of screenerMoves[from]) {
      it(`allows ${from} → ${to}, recorded as one event`, async () => {
        const participantId = await newParticipant('INTERVIEW', screenerRecipes[from]);
        const participant = await patchParticipant(service, tenant, studies.INTERVIEW, participantId, { screenerState: to });
        expect(participant.screenerState).toBe(to);
        await expectLastEvent(participantId, 'screenerState', from, to, to === 'SCREENER_SENT');
      });
    }
    const refused = screenerStates.filter((to) => to !== from && !screenerMoves[from].includes(to));
    if (refused.length > 0) {
      it(`refuses ${from} → ${refused.join(', ')} (409)`, async () => {
        const participantId = await newParticipant('INTERVIEW', screenerRecipes[from]);
        for (const to of refused) await expectRefused('INTERVIEW', participantId, { screenerState: to }, ['screenerState'], `screenerState cannot move from ${from} to ${to}`);
      });
    }
  }
});

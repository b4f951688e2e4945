import { describe, expect, it } from 'vitest';
import * as consoleMoves from '../../console/src/participants/moves.js';
import * as server from '../../src/families/participants/states.js';

/**
 * The console keeps a copy of the participant state tables (it imports no server code); this
 * compares the copy with the server's own tables, and the console's offered moves with what the
 * server's refusedMove accepts, so neither can drift from the other unnoticed.
 */
describe('the console’s participant state tables', () => {
  it('are the server’s', () => {
    expect(consoleMoves.statusMoves).toEqual(server.statusMoves);
    expect(consoleMoves.approvalMoves).toEqual(server.approvalMoves);
    expect(consoleMoves.sessionStatuses).toEqual(server.sessionStatuses);
    expect(consoleMoves.outreachStatuses).toEqual(server.outreachStatuses);
    for (const type of ['INTERVIEWS', 'GROUP_INTERVIEW', 'UNMODERATED_TEST', 'SURVEY'] as const) {
      expect(consoleMoves.isInterviewStudy(type), type).toBe(server.studyKindOf(type) === 'INTERVIEW');
    }
  });

  it('offer exactly the status moves the server accepts, for every study and participant the console can tell apart', () => {
    for (const studyType of ['INTERVIEWS', 'GROUP_INTERVIEW', 'UNMODERATED_TEST', 'SURVEY'] as const) {
      for (const studyStatus of ['DRAFT', 'ACTIVE', 'PAUSED', 'CLOSED'] as const) {
        for (const status of server.participantStatuses.filter((value) => value !== 'HIDDEN')) {
          for (const approvalStatus of server.approvalStatuses) {
            const offered = consoleMoves.offeredStatusMoves({ status, approvalStatus }, { studyType, status: studyStatus });
            const accepted = server.participantStatuses.filter(
              (to) =>
                to !== status &&
                server.refusedMove(
                  { studyType, studyStatus, hasScreener: false },
                  { status, statusBeforeHidden: null, approvalStatus, screenerState: 'NOT_SENT', interviewStartTime: null, isOptedOut: false },
                  // A session gets its time in the same request, as the console's form sends it.
                  { status: to, ...(to === 'SCHEDULED' ? { interviewStartTime: '2030-01-01T10:00:00.000Z' } : {}) },
                ) === undefined,
            );
            expect(offered, `${studyType} ${studyStatus} ${status} ${approvalStatus}`).toEqual(accepted);
          }
        }
      }
    }
  });
});

import { describe, expect, it } from 'vitest';
import { allRights, assignableRights, effectiveRights, rightSetByRole, rightsByRole } from './rights.js';

describe('effectiveRights', () => {
  it("shares a built-in role's set when the key is not limited: nothing is allocated per lookup", () => {
    expect(effectiveRights('RESEARCHER', null, null)).toBe(rightSetByRole.RESEARCHER);
    expect([...effectiveRights('SUPER_ADMIN', null, null)]).toEqual([...allRights]);
  });

  it("gives a CUSTOM user their custom role's rights and nothing of SUPER_ADMIN's alone, whatever is stored", () => {
    expect([...effectiveRights('CUSTOM', ['studies:read', 'users:write', 'no-such:right'], null)]).toEqual(['studies:read']);
    expect(effectiveRights('CUSTOM', null, null).size).toBe(0);
    expect(rightsByRole.CUSTOM).toEqual([]);
    expect(assignableRights).not.toContain('users:write');
    expect(assignableRights).not.toContain('incentive-providers:manage');
    expect(assignableRights).not.toContain('test-helpers:run');
  });

  it("intersects a limited key's rights with its user's: never more than the user holds", () => {
    expect([...effectiveRights('OBSERVER', null, ['studies:read', 'studies:write'])]).toEqual(['studies:read']);
    expect([...effectiveRights('CUSTOM', ['people:read'], ['people:read', 'studies:read'])]).toEqual(['people:read']);
  });

  it('lets every built-in role make its own keys', () => {
    for (const role of ['SUPER_ADMIN', 'OPS_MANAGER', 'RESEARCHER', 'DEVELOPER', 'COLLABORATOR', 'OBSERVER'] as const) expect(rightSetByRole[role].has('api-keys:write'), role).toBe(true);
    expect(rightSetByRole.OPS_MANAGER.has('users:write')).toBe(false);
  });
});

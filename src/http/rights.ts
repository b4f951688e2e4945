import type { UserRole } from '../db/schema.js';

/**
 * The rights an operation can require. Each route declares exactly one (or none, for public
 * routes) in its `config.right`; the auth hook enforces it and the OpenAPI description shows it.
 */
export const allRights = [
  'studies:read',
  'studies:write',
  'screeners:write',
  'templates:write',
  'users:read',
  'users:write',
  'api-keys:write',
  'people:read',
  'people:write',
  'people:delete',
  'properties:read',
  'properties:write',
  'populations:read',
  'populations:write',
  'imports:write',
  'participants:read',
  'participants:write',
  'incentives:read',
  'incentives:write',
  'incentives:approve',
  'signups:read',
  'signups:write',
  'consent:read',
  'consent:write',
  'consent-forms:read',
  'consent-forms:write',
  'branding:read',
  'branding:write',
  'events:read',
  'webhooks:read',
  'webhooks:write',
  'messages:read',
  'messages:write',
  'incentive-providers:manage',
  'backfills:write',
  'audit:read',
  'audit:manage',
  'test-helpers:run',
] as const;

export type Right = (typeof allRights)[number];

export const allRoles: readonly UserRole[] = [
  'SUPER_ADMIN',
  'OPS_MANAGER',
  'RESEARCHER',
  'DEVELOPER',
  'COLLABORATOR',
  'CUSTOM',
  'OBSERVER',
];

/**
 * The test helpers (only with TEST_HELPERS=1) move the service's clock and run every workspace's
 * background work: SUPER_ADMIN alone may call them, whatever else a role may do. The same holds
 * for the workspace's incentive provider and its credentials: where the money goes and whose
 * account pays it. And for how long the audit trail is kept (audit:manage).
 */
// Backfills write a panel's history in bulk (restricted access, issue 36): SUPER_ADMIN alone.
const superAdminRights: readonly Right[] = ['test-helpers:run', 'incentive-providers:manage', 'users:write', 'backfills:write', 'audit:manage'];
/** The rights of the API proper, which the other roles share out. */
const apiRights = allRights.filter((right) => !superAdminRights.includes(right));
/** The rights a SUPER_ADMIN may give a custom role: those of the API proper, none of SUPER_ADMIN's own. */
export const assignableRights: readonly Right[] = apiRights;

// Webhook endpoints' URLs often embed a receiver's own secret: reading them is for who integrates.
// The audit trail (who did what, when) is for who runs the workspace: SUPER_ADMIN and OPS_MANAGER.
const readRights = apiRights.filter((right) => right.endsWith(':read') && right !== 'webhooks:read' && right !== 'audit:read');
const except = (...excluded: Right[]) => apiRights.filter((right) => !excluded.includes(right));

/**
 * Which role may do what. OBSERVER reads only (and makes its own API keys: `api-keys:write` is
 * every role's). SUPER_ADMIN may do everything. A CUSTOM user holds exactly the rights of their
 * custom role (custom_roles, chosen by a SUPER_ADMIN among assignableRights): none by the role
 * itself, so the entry below is empty and the principal's rights come from the custom role.
 */
export const rightsByRole: Record<UserRole, readonly Right[]> = {
  SUPER_ADMIN: allRights,
  // Runs the panel: everything but SUPER_ADMIN's own (users and invitations, the payout provider, backfills, the audit trail's retention, the test helpers).
  OPS_MANAGER: apiRights,
  // Runs studies and pays participants; leaves the panel's schema and erasure to ops.
  // Approving a colleague's payment (and setting the thresholds) is for who holds the budget: OPS_MANAGER, SUPER_ADMIN.
  RESEARCHER: except('properties:write', 'people:delete', 'imports:write', 'webhooks:write', 'incentives:approve', 'audit:read'),
  // Integrates systems: manages panel data and studies, but moves no money.
  DEVELOPER: except('incentives:write', 'incentives:approve', 'audit:read'),
  // Helps on studies: notes, participants and screeners, nothing workspace-wide (message templates are workspace-wide).
  // Consent forms are what a study asks its people to sign, written with the study: whoever
  // writes studies writes them (a new version never changes what was signed, see consent-forms/).
  // Branding configs are how a study's pages look, chosen with the study: the same holds.
  COLLABORATOR: [...readRights, 'api-keys:write', 'studies:write', 'screeners:write', 'participants:write', 'consent-forms:write', 'branding:write'],
  CUSTOM: [],
  OBSERVER: [...readRights, 'api-keys:write'],
};

/** Each role's rights as a set, made once: a principal of a built-in role shares its role's set. */
export const rightSetByRole: Readonly<Record<UserRole, ReadonlySet<Right>>> = Object.fromEntries(
  allRoles.map((role) => [role, new Set(rightsByRole[role])]),
) as unknown as Record<UserRole, ReadonlySet<Right>>;

const knownRights: ReadonlySet<string> = new Set(allRights);
export const isRight = (name: string): name is Right => knownRights.has(name);

/**
 * A credential's effective rights, computed once when its principal is looked up: the role's (or,
 * for CUSTOM, the custom role's), intersected with the key's own when it is limited (`keyRights`
 * non-null). Names no longer known (a right since removed) are dropped. A built-in role's key
 * without limits shares the role's set: no allocation.
 */
export function effectiveRights(role: UserRole, customRoleRights: readonly string[] | null, keyRights: readonly string[] | null): ReadonlySet<Right> {
  const base: ReadonlySet<Right> =
    role === 'CUSTOM' ? new Set((customRoleRights ?? []).filter((name): name is Right => isRight(name) && assignableRights.includes(name))) : rightSetByRole[role];
  if (keyRights === null) return base;
  const limited = new Set<Right>();
  for (const name of keyRights) if (isRight(name) && base.has(name)) limited.add(name);
  return limited;
}

export function rolesWithRight(right: Right): UserRole[] {
  return allRoles.filter((role) => rightsByRole[role].includes(right));
}

export function roleHasRight(role: UserRole, right: Right): boolean {
  return rightsByRole[role].includes(right);
}

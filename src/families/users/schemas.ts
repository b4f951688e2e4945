import { Type } from '@sinclair/typebox';
import { allRights, assignableRights } from '../../http/rights.js';

export const Team = Type.Object(
  { teamId: Type.String(), name: Type.String({ description: 'Unique in the workspace, case-insensitively.' }) },
  { $id: 'Team', title: 'Team', examples: [{ teamId: 'tem_01JD0000000000000000000000', name: 'Discovery' }] },
);

export const User = Type.Object(
  {
    userId: Type.String(),
    workspaceId: Type.String(),
    workspaceSlug: Type.String(),
    fullname: Type.String(),
    email: Type.String({ format: 'email' }),
    jobRole: Type.String(),
    profilePic: Type.String({ description: 'URL of the profile picture, or empty.' }),
    status: Type.Union([Type.Literal('INVITED'), Type.Literal('ACTIVE'), Type.Literal('DEACTIVATED')]),
    seat: Type.Union([Type.Literal('SERVICE'), Type.Literal('RESEARCHER_FREE'), Type.Literal('RESEARCHER_PAID'), Type.Literal('LITE'), Type.Null()]),
    role: Type.Union(
      ['DEVELOPER', 'OBSERVER', 'RESEARCHER', 'OPS_MANAGER', 'SUPER_ADMIN', 'CUSTOM', 'COLLABORATOR'].map((role) => Type.Literal(role)),
    ),
    teams: Type.Array(Type.Ref(Team), { description: "The user's teams, by name (case-insensitive)." }),
  },
  {
    $id: 'User',
    title: 'User',
    examples: [
      {
        userId: 'usr_01JD0000000000000000000000',
        workspaceId: 'wsp_01JD0000000000000000000000',
        workspaceSlug: 'acme-research',
        fullname: 'Ada Lovelace',
        email: 'ada@example.org',
        jobRole: 'Research ops',
        profilePic: '',
        status: 'ACTIVE',
        seat: 'RESEARCHER_PAID',
        role: 'SUPER_ADMIN',
        teams: [{ teamId: 'tem_01JD0000000000000000000000', name: 'Discovery' }],
      },
    ],
  },
);

export const TeamList = Type.Object(
  { results: Type.Array(Type.Ref(Team), { description: 'Every team of the workspace, by name (case-insensitive).' }) },
  {
    title: 'TeamList',
    examples: [
      {
        results: [
          { teamId: 'tem_01JD0000000000000000000000', name: 'Checkout' },
          { teamId: 'tem_01JD0000000000000000000001', name: 'Discovery' },
        ],
      },
    ],
  },
);


const roleNames = ['DEVELOPER', 'OBSERVER', 'RESEARCHER', 'OPS_MANAGER', 'SUPER_ADMIN', 'CUSTOM', 'COLLABORATOR'] as const;
const seatNames = ['SERVICE', 'RESEARCHER_FREE', 'RESEARCHER_PAID', 'LITE'] as const;
export const RoleName = Type.Union(roleNames.map((role) => Type.Literal(role)));
const SeatName = Type.Union(seatNames.map((seat) => Type.Literal(seat)));
const statusNames = ['INVITED', 'ACTIVE', 'DEACTIVATED'] as const;

/** A right's name, as a role, a custom role or a key holds it: one of `names`. */
export const RightName = (names: readonly string[], description: string) => Type.Union(names.map((name) => Type.Literal(name)), { description });

/** A user as the users API shows it: the reference's User, with the custom role of a CUSTOM user. */
export const WorkspaceUser = Type.Object(
  {
    ...User.properties,
    customRoleId: Type.Union([Type.String(), Type.Null()], { description: 'The custom role of a CUSTOM user (its rights are theirs); null for every other role.' }),
  },
  {
    $id: 'WorkspaceUser',
    title: 'WorkspaceUser',
    examples: [{ ...(User.examples as Record<string, unknown>[])[0], customRoleId: null }],
  },
);

export const UserIdParams = Type.Object({ userId: Type.String({ minLength: 1, maxLength: 100 }) });

export const UsersQuery = Type.Object(
  {
    startCursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, description: 'The endCursor of the previous page.' })),
    size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25, description: 'Items per page, 1–100.' })),
    status: Type.Optional(Type.Union(statusNames.map((status) => Type.Literal(status)), { description: 'Only users of this status.' })),
    role: Type.Optional(Type.Union(roleNames.map((role) => Type.Literal(role)), { description: 'Only users of this role.' })),
    teamId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only members of this team.' })),
  },
  { additionalProperties: false },
);

export const UpdateUserBody = Type.Object(
  {
    role: Type.Optional(RoleName),
    customRoleId: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 100 }), Type.Null()], { description: 'Required with role CUSTOM (unless the user holds one already); refused with any other role.' })),
    seat: Type.Optional(Type.Union([SeatName, Type.Null()])),
    fullname: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    jobRole: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ role: 'RESEARCHER', seat: 'RESEARCHER_PAID' }] },
);

export const TeamBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'Unique in the workspace, case-insensitively.' }) },
  { additionalProperties: false, examples: [{ name: 'Discovery' }] },
);

export const TeamMembership = Type.Object(
  { teamId: Type.String(), userId: Type.String() },
  { title: 'TeamMembership', examples: [{ teamId: 'tem_01JD0000000000000000000000', userId: 'usr_01JD0000000000000000000000' }] },
);

export const TeamIdParams = Type.Object({ teamId: Type.String({ minLength: 1, maxLength: 100 }) });
export const TeamMemberParams = Type.Object({ teamId: Type.String({ minLength: 1, maxLength: 100 }), userId: Type.String({ minLength: 1, maxLength: 100 }) });

export const CustomRole = Type.Object(
  {
    customRoleId: Type.String(),
    name: Type.String({ description: 'Unique in the workspace, case-insensitively.' }),
    rights: Type.Array(Type.String(), { description: 'The rights its users hold, in the order of the rights table.' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  {
    $id: 'CustomRole',
    title: 'CustomRole',
    examples: [
      {
        customRoleId: 'crl_01JD0000000000000000000000',
        name: 'Recruiter',
        rights: ['studies:read', 'people:read', 'participants:read', 'participants:write'],
        createdAt: '2026-11-22T10:00:00.000Z',
        updatedAt: '2026-11-22T10:00:00.000Z',
      },
    ],
  },
);

export const CustomRoleList = Type.Object(
  { results: Type.Array(Type.Ref(CustomRole), { description: 'Every custom role of the workspace, by name (case-insensitive).' }) },
  { title: 'CustomRoleList', examples: [{ results: CustomRole.examples }] },
);

export const CustomRoleIdParams = Type.Object({ roleId: Type.String({ minLength: 1, maxLength: 100 }) });

export const ApiKey = Type.Object(
  {
    keyId: Type.String(),
    userId: Type.String(),
    name: Type.String({ description: 'Empty for a token made with the CLI.' }),
    rights: Type.Union([Type.Array(Type.String()), Type.Null()], { description: "The rights the key is limited to (its user's, at most); null: all of its user's rights, whatever they are at the time." }),
    canReadPersonalData: Type.Boolean(),
    canReadScreeners: Type.Boolean(),
    createdAt: Type.String({ format: 'date-time' }),
    expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When it last authenticated a request, to the minute (written at most once a minute).' }),
    revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  {
    $id: 'ApiKey',
    title: 'ApiKey',
    examples: [
      {
        keyId: 'tok_01JD0000000000000000000000',
        userId: 'usr_01JD0000000000000000000000',
        name: 'Nightly export',
        rights: ['people:read', 'participants:read'],
        canReadPersonalData: false,
        canReadScreeners: false,
        createdAt: '2026-11-22T10:00:00.000Z',
        expiresAt: '2027-02-20T10:00:00.000Z',
        lastUsedAt: '2026-11-23T02:00:00.000Z',
        revokedAt: null,
      },
    ],
  },
);

export const ApiKeyWithSecret = Type.Object(
  { ...ApiKey.properties, secret: Type.String({ description: 'The bearer token: shown this once, stored only as its SHA-256 digest.' }) },
  { title: 'ApiKeyWithSecret', examples: [{ ...(ApiKey.examples as Record<string, unknown>[])[0], secret: 'rk_wsp_01JD0000000000000000000000_3q2-7wEXAMPLEexampleEXAMPLEexampleEXAMPLEex' }] },
);

export const KeyIdParams = Type.Object({ keyId: Type.String({ minLength: 1, maxLength: 100 }) });
export const UserKeyParams = Type.Object({ userId: Type.String({ minLength: 1, maxLength: 100 }), keyId: Type.String({ minLength: 1, maxLength: 100 }) });

export const CustomRoleBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'Unique in the workspace, case-insensitively.' }),
    rights: Type.Array(RightName(assignableRights, 'A right of the API proper (not one of SUPER_ADMIN alone).'), { maxItems: 100, uniqueItems: true }),
  },
  { additionalProperties: false, examples: [{ name: 'Recruiter', rights: ['studies:read', 'people:read', 'participants:read', 'participants:write'] }] },
);

export const UpdateCustomRoleBody = Type.Object(
  {
    name: Type.Optional(CustomRoleBody.properties.name),
    rights: Type.Optional(CustomRoleBody.properties.rights),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ rights: ['studies:read', 'people:read'] }] },
);

/** The longest a key may live: a year (a key that must outlive it is made again). */
export const MAX_KEY_LIFETIME_DAYS = 365;

export const CreateApiKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'What the key is for.' }),
    rights: Type.Optional(
      Type.Array(RightName(allRights, "A right the caller's own credential holds."), {
        maxItems: 100,
        uniqueItems: true,
        description: "A subset of the caller's own rights; absent: all of them, as they are now (fixed at creation).",
      }),
    ),
    canReadPersonalData: Type.Optional(Type.Boolean({ description: "Defaults to the caller's own credential's; true only if it is." })),
    canReadScreeners: Type.Optional(Type.Boolean({ description: "Defaults to the caller's own credential's; true only if it is." })),
    expiresAt: Type.Optional(Type.String({ format: 'date-time', description: `In the future, at most ${MAX_KEY_LIFETIME_DAYS} days ahead; absent: the key does not expire.` })),
  },
  { additionalProperties: false, examples: [{ name: 'Nightly export', rights: ['people:read', 'participants:read'], canReadPersonalData: false, expiresAt: '2027-02-20T10:00:00.000Z' }] },
);

export const userSchemas = [Team, User, WorkspaceUser, CustomRole, ApiKey];

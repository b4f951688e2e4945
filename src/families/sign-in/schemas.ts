import { Type } from '@sinclair/typebox';
import { IsoDateTime } from '../../http/schemas.js';

const roles = ['DEVELOPER', 'OBSERVER', 'RESEARCHER', 'OPS_MANAGER', 'SUPER_ADMIN', 'CUSTOM', 'COLLABORATOR'] as const;
const seats = ['SERVICE', 'RESEARCHER_FREE', 'RESEARCHER_PAID', 'LITE'] as const;

const Email = Type.String({ format: 'email', minLength: 3, maxLength: 320, description: 'The address the link goes to.', examples: ['ada@example.org'] });
const WorkspaceSlug = Type.String({ minLength: 1, maxLength: 100, description: "The workspace's slug (GET /v1/me's workspaceSlug).", examples: ['acme-research'] });
const LinkToken = Type.String({ minLength: 1, maxLength: 200, description: "The token of the emailed link (the part after '#').", examples: ['yB8cQ3YkJm0sZg0Q4m8m1D2bqN2m6v9yO1jv8B0nS2U'] });
/** A password a person chose: long enough to matter, bounded so that hashing stays cheap to refuse. */
export const passwordMinLength = 12;
const Password = (description: string) => Type.String({ minLength: passwordMinLength, maxLength: 256, description, examples: ['correct horse battery staple'] });

export const InvitationBody = Type.Object(
  {
    email: Email,
    role: Type.Union(roles.map((role) => Type.Literal(role)), { description: 'The role the user gets.' }),
    customRoleId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'With role CUSTOM (and only then): the custom role the user holds (GET /custom-roles).' }),
    ),
    seat: Type.Optional(Type.Union(seats.map((seat) => Type.Literal(seat)))),
    fullname: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    teamIds: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 100, uniqueItems: true, description: 'Teams of the workspace the user joins.' })),
  },
  { additionalProperties: false, title: 'InvitationBody', examples: [{ email: 'grace@example.org', role: 'RESEARCHER', seat: 'RESEARCHER_PAID', fullname: 'Grace Hopper', teamIds: ['tem_01JD0000000000000000000000'] }] },
);

export const InvitationSent = Type.Object(
  {
    userId: Type.String(),
    status: Type.Literal('INVITED'),
    expiresInDays: Type.Integer({ description: 'How long the emailed link stays valid.' }),
  },
  { $id: 'InvitationSent', title: 'InvitationSent', examples: [{ userId: 'usr_01JD0000000000000000000000', status: 'INVITED', expiresInDays: 7 }] },
);

export const InvitationRevoked = Type.Object(
  { userId: Type.String(), revoked: Type.Literal(true) },
  { $id: 'InvitationRevoked', title: 'InvitationRevoked', examples: [{ userId: 'usr_01JD0000000000000000000000', revoked: true }] },
);

export const UserIdParams = Type.Object({ userId: Type.String({ minLength: 1, maxLength: 64 }) });

export const SessionInfo = Type.Object(
  {
    sessionId: Type.String({ description: 'The session id (`ses_…`): what the audit trail names as the token.' }),
    userId: Type.String(),
    workspaceId: Type.String(),
    method: Type.Union([Type.Literal('INVITATION'), Type.Literal('LINK'), Type.Literal('PASSWORD'), Type.Literal('OIDC')], { description: 'How the session began.' }),
    createdAt: IsoDateTime(),
    expiresAt: IsoDateTime('The absolute end of the session, whatever happens.'),
    idleTimeoutSeconds: Type.Integer({ description: 'The session ends after this long without a request.' }),
    csrfToken: Type.String({ description: 'Send it in the X-CSRF-Token header of every write made with the session cookie.' }),
  },
  {
    $id: 'SessionInfo',
    title: 'SessionInfo',
    examples: [
      {
        sessionId: 'ses_01JD0000000000000000000000',
        userId: 'usr_01JD0000000000000000000000',
        workspaceId: 'wsp_01JD0000000000000000000000',
        method: 'PASSWORD',
        createdAt: '2026-12-12T09:00:00.000Z',
        expiresAt: '2026-12-19T09:00:00.000Z',
        idleTimeoutSeconds: 43200,
        csrfToken: 'kC6b0V2m5bq1yJvJrQ2sWm1GJmG3n0h9o7ZkV1cTg2A',
      },
    ],
  },
);

export const LinkRequestBody = Type.Object({ workspace: WorkspaceSlug, email: Email }, { additionalProperties: false, title: 'SignInLinkRequest' });
export const LinkRequested = Type.Object(
  { message: Type.String() },
  { $id: 'SignInLinkRequested', title: 'SignInLinkRequested', examples: [{ message: 'If this address belongs to an active user of the workspace, a sign-in link is on its way.' }] },
);
export const RedeemBody = Type.Object({ token: LinkToken }, { additionalProperties: false, title: 'SignInLinkRedeem' });
export const AcceptInvitationBody = Type.Object(
  { token: LinkToken, password: Type.Optional(Password('A password to sign in with later; without it, the user signs in by emailed link (or SSO).')) },
  { additionalProperties: false, title: 'InvitationAcceptance' },
);
export const PasswordSignInBody = Type.Object({ workspace: WorkspaceSlug, email: Email, password: Type.String({ minLength: 1, maxLength: 256 }) }, { additionalProperties: false, title: 'PasswordSignIn' });
export const ChangePasswordBody = Type.Object(
  { currentPassword: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'Required when a password is already set.' })), newPassword: Password('The new password.') },
  { additionalProperties: false, title: 'PasswordChange' },
);
export const SignedOut = Type.Object({ sessionsEnded: Type.Integer() }, { $id: 'SignedOut', title: 'SignedOut', examples: [{ sessionsEnded: 1 }] });
export const PasswordChanged = Type.Object({ passwordSet: Type.Literal(true) }, { $id: 'PasswordChanged', title: 'PasswordChanged', examples: [{ passwordSet: true }] });

export const signInSchemas = [InvitationSent, InvitationRevoked, SessionInfo, LinkRequested, SignedOut, PasswordChanged];

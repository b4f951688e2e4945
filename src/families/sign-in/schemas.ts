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

const jitRoleNames = ['DEVELOPER', 'OBSERVER', 'RESEARCHER', 'OPS_MANAGER', 'COLLABORATOR'] as const;
const JitRole = Type.Union(jitRoleNames.map((role) => Type.Literal(role)), { description: 'The role of a user who becomes a member at their first sign-in (never SUPER_ADMIN or CUSTOM).' });
const EmailDomain = Type.String({
  minLength: 3,
  maxLength: 253,
  pattern: '^([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63}$',
  description: 'An email domain, as `example.org`.',
});

export const SsoSettings = Type.Object(
  {
    issuer: Type.String({ description: "The identity provider's issuer URL: its discovery document is at `<issuer>/.well-known/openid-configuration`." }),
    clientId: Type.String({ description: "This service's client id at the provider." }),
    clientSecretSet: Type.Boolean({ description: 'Whether a client secret is kept (sealed; it is never shown). Without one the client is public and relies on PKCE.' }),
    jitDomains: Type.Array(Type.String(), { description: "People whose verified address is at one of these domains become ACTIVE users at their first sign-in (just-in-time membership); others must be invited first." }),
    jitRole: JitRole,
    enabled: Type.Boolean({ description: 'Whether the console offers sign-in through the provider.' }),
    redirectUri: Type.String({ description: "The redirect URI to register at the provider (the service's PUBLIC_URL, else the address this request came to)." }),
    version: Type.Integer(),
    updatedAt: IsoDateTime(),
  },
  {
    $id: 'SsoSettings',
    title: 'SsoSettings',
    examples: [
      {
        issuer: 'https://login.example.org',
        clientId: 'recruit-ops',
        clientSecretSet: true,
        jitDomains: ['example.org'],
        jitRole: 'OBSERVER',
        enabled: true,
        redirectUri: 'https://recruit.example.org/v1/session/oidc/callback',
        version: 1,
        updatedAt: '2026-12-15T09:00:00.000Z',
      },
    ],
  },
);

export const PutSsoSettingsBody = Type.Object(
  {
    issuer: Type.String({ format: 'uri', minLength: 8, maxLength: 500, description: 'https (http only where the operator set OIDC_ALLOW_HTTP); a public address unless OIDC_ALLOW_PRIVATE_ISSUERS.' }),
    clientId: Type.String({ minLength: 1, maxLength: 255 }),
    clientSecret: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 1000 }), Type.Null()], { description: 'Left out: the secret kept before stays; null: none (a public client).' }),
    ),
    jitDomains: Type.Optional(Type.Array(EmailDomain, { maxItems: 50, uniqueItems: true, description: 'Email domains for just-in-time membership; none by default.' })),
    jitRole: Type.Optional(JitRole),
    enabled: Type.Optional(Type.Boolean({ default: true })),
  },
  {
    additionalProperties: false,
    title: 'PutSsoSettings',
    examples: [{ issuer: 'https://login.example.org', clientId: 'recruit-ops', clientSecret: 'a-secret-from-the-provider', jitDomains: ['example.org'], jitRole: 'OBSERVER' }],
  },
);

export const SsoSettingsDeleted = Type.Object({ deleted: Type.Literal(true) }, { $id: 'SsoSettingsDeleted', title: 'SsoSettingsDeleted', examples: [{ deleted: true }] });

export const SsoStartQuery = Type.Object({ workspace: WorkspaceSlug }, { additionalProperties: false });

/** What the provider sends back (RFC 6749 §4.1.2; providers add their own parameters, which are kept for the checks). */
export const SsoCallbackQuery = Type.Object(
  {
    code: Type.Optional(Type.String({ maxLength: 4096 })),
    state: Type.Optional(Type.String({ maxLength: 1024 })),
    iss: Type.Optional(Type.String({ maxLength: 2048 })),
    error: Type.Optional(Type.String({ maxLength: 256 })),
    error_description: Type.Optional(Type.String({ maxLength: 2048 })),
  },
  { additionalProperties: Type.String({ maxLength: 4096 }) },
);

export const signInSchemas = [InvitationSent, InvitationRevoked, SessionInfo, LinkRequested, SignedOut, PasswordChanged, SsoSettings, SsoSettingsDeleted];

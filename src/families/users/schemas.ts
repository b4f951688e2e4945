import { Type } from '@sinclair/typebox';

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

export const userSchemas = [Team, User];

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { ServiceDeps } from '../../context.js';
import { principalOf } from '../../http/auth.js';
import type { FastifyRequest } from 'fastify';
import { cursorScope, listPage } from '../../http/pagination.js';
import { errorResponse, ListQuery, paged } from '../../http/schemas.js';
import { findUserWithTeams, listTeams, listUsers } from './queries.js';
import {
  ApiKey,
  ApiKeyWithSecret,
  CreateApiKeyBody,
  CustomRole,
  CustomRoleBody,
  CustomRoleIdParams,
  CustomRoleList,
  KeyIdParams,
  Team,
  TeamBody,
  TeamIdParams,
  TeamList,
  TeamMemberParams,
  TeamMembership,
  UpdateCustomRoleBody,
  UpdateUserBody,
  User,
  UserIdParams,
  UserKeyParams,
  UsersQuery,
  WorkspaceUser,
} from './schemas.js';
import * as service from './service.js';

const invalid = errorResponse('Invalid input; `path` names the offending field or parameter.');
const userNotFound = errorResponse("User not found (also another workspace's).");
const teamNotFound = errorResponse("Team not found (also another workspace's).");
const roleNotFound = errorResponse("Custom role not found (also another workspace's).");
const keyNotFound = errorResponse("API key not found (also another user's, or another workspace's).");
const UserPage = paged(Type.Ref(WorkspaceUser), 'WorkspaceUserList', (WorkspaceUser.examples as unknown[])[0]);
const KeyPage = paged(Type.Ref(ApiKey), 'ApiKeyList', (ApiKey.examples as unknown[])[0]);

export const usersRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  app.get(
    '/me',
    {
      config: { right: 'users:read' },
      schema: {
        operationId: 'getCurrentUser',
        'x-reference-id': 'E14',
        summary: 'The authenticated user',
        description: "The token's user, with the teams they belong to.",
        tags: ['Users'],
        response: { 200: Type.Ref(User) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const user = await findUserWithTeams(deps.tenantDb(principal.workspaceId), principal.workspaceId, principal.userId);
      if (!user) throw new Error('An authenticated user vanished');
      return user;
    },
  );

  app.get(
    '/teams',
    {
      config: { right: 'users:read' },
      schema: {
        operationId: 'listTeams',
        summary: 'Teams of the workspace',
        description: "Every team of the token's workspace, by name (case-insensitive).",
        tags: ['Teams'],
        response: { 200: TeamList },
      },
    },
    async (request) => {
      const { workspaceId } = principalOf(request);
      return { results: await listTeams(deps.tenantDb(workspaceId), workspaceId) };
    },
  );

  const context = (request: FastifyRequest): service.AccountsContext => {
    const principal = principalOf(request);
    return { db: deps.tenantDb(principal.workspaceId), clock: deps.clock, principal, principals: deps.principals };
  };

  app.get(
    '/users',
    {
      config: { right: 'users:read' },
      schema: {
        operationId: 'listUsers',
        summary: 'Users of the workspace',
        description: 'In the order they were made, keyset-paged; `status`, `role` and `teamId` narrow the list (together: all of them).',
        tags: ['Users'],
        querystring: UsersQuery,
        response: { 200: UserPage, 400: invalid },
      },
    },
    async (request) => {
      const { status, role, teamId } = request.query;
      const { workspaceId } = principalOf(request);
      const scope = cursorScope(workspaceId, `users:${JSON.stringify([status ?? null, role ?? null, teamId ?? null])}`);
      return listPage(deps.cursors, scope, request.query, (user) => user.userId, (after, size) =>
        listUsers(deps.tenantDb(workspaceId), workspaceId, { status, role, teamId }, after, size),
      );
    },
  );

  app.get(
    '/users/:userId',
    {
      config: { right: 'users:read' },
      schema: { operationId: 'getUser', summary: 'A user of the workspace', tags: ['Users'], params: UserIdParams, response: { 200: Type.Ref(WorkspaceUser), 400: invalid, 404: userNotFound } },
    },
    async (request) => service.getUser(context(request), request.params.userId),
  );

  app.patch(
    '/users/:userId',
    {
      config: { right: 'users:write' },
      schema: {
        operationId: 'updateUser',
        summary: 'Change a user',
        description:
          'Changes the role (with `customRoleId` for CUSTOM), the seat, the name or the job role. The new rights hold at once for every key and session of the user, on every instance. ' +
          "The workspace's last active SUPER_ADMIN cannot be demoted (409).",
        tags: ['Users'],
        params: UserIdParams,
        body: UpdateUserBody,
        response: { 200: Type.Ref(WorkspaceUser), 400: invalid, 404: errorResponse('User (or the custom role named) not found.'), 409: errorResponse("The workspace's last active SUPER_ADMIN.") },
      },
    },
    async (request) => service.updateUser(context(request), request.params.userId, request.body),
  );

  app.post(
    '/users/:userId/deactivate',
    {
      config: { right: 'users:write' },
      schema: {
        operationId: 'deactivateUser',
        summary: 'Deactivate a user',
        description: "Every key and session of the user stops working at once, on every instance (401). The workspace's last active SUPER_ADMIN cannot be deactivated (409). Deactivating a deactivated user changes nothing.",
        tags: ['Users'],
        params: UserIdParams,
        response: { 200: Type.Ref(WorkspaceUser), 400: invalid, 404: userNotFound, 409: errorResponse("The workspace's last active SUPER_ADMIN.") },
      },
    },
    async (request) => service.deactivateUser(context(request), request.params.userId),
  );

  app.post(
    '/users/:userId/reactivate',
    {
      config: { right: 'users:write' },
      schema: {
        operationId: 'reactivateUser',
        summary: 'Reactivate a user',
        description: 'A DEACTIVATED user is ACTIVE again: their unrevoked, unexpired keys work again. Any other status: 409.',
        tags: ['Users'],
        params: UserIdParams,
        response: { 200: Type.Ref(WorkspaceUser), 400: invalid, 404: userNotFound, 409: errorResponse('The user is not DEACTIVATED.') },
      },
    },
    async (request) => service.reactivateUser(context(request), request.params.userId),
  );

  app.post(
    '/teams',
    {
      config: { right: 'users:write' },
      schema: {
        operationId: 'createTeam',
        summary: 'Create a team',
        tags: ['Teams'],
        body: TeamBody,
        response: { 201: Type.Ref(Team), 400: invalid, 409: errorResponse('A team of that name (case-insensitively) exists.') },
      },
    },
    async (request, reply) => reply.code(201).send(await service.createTeam(context(request), request.body.name)),
  );

  app.patch(
    '/teams/:teamId',
    {
      config: { right: 'users:write' },
      schema: {
        operationId: 'renameTeam',
        summary: 'Rename a team',
        tags: ['Teams'],
        params: TeamIdParams,
        body: TeamBody,
        response: { 200: Type.Ref(Team), 400: invalid, 404: teamNotFound, 409: errorResponse('Another team of that name (case-insensitively) exists.') },
      },
    },
    async (request) => service.renameTeam(context(request), request.params.teamId, request.body.name),
  );

  app.delete(
    '/teams/:teamId',
    {
      config: { right: 'users:write' },
      schema: {
        operationId: 'deleteTeam',
        summary: 'Delete a team',
        description: 'Its memberships go with it; its members stay users of the workspace.',
        tags: ['Teams'],
        params: TeamIdParams,
        response: {
          200: Type.Object({ teamId: Type.String() }, { examples: [{ teamId: 'tem_01JD0000000000000000000000' }] }),
          400: invalid,
          404: teamNotFound,
          409: errorResponse('The team still has studies (their `teamId`): give them to another team first.'),
        },
      },
    },
    async (request) => service.deleteTeam(context(request), request.params.teamId),
  );

  app.put(
    '/teams/:teamId/members/:userId',
    {
      config: { right: 'users:write' },
      schema: {
        operationId: 'addTeamMember',
        summary: 'Add a member to a team',
        description: 'Idempotent: a member already is one.',
        tags: ['Teams'],
        params: TeamMemberParams,
        response: { 200: TeamMembership, 400: invalid, 404: errorResponse('Team or user not found.') },
      },
    },
    async (request) => service.addTeamMember(context(request), request.params.teamId, request.params.userId),
  );

  app.delete(
    '/teams/:teamId/members/:userId',
    {
      config: { right: 'users:write' },
      schema: {
        operationId: 'removeTeamMember',
        summary: 'Remove a member from a team',
        tags: ['Teams'],
        params: TeamMemberParams,
        response: { 200: TeamMembership, 400: invalid, 404: errorResponse('Team not found, or the user is not a member of it.') },
      },
    },
    async (request) => service.removeTeamMember(context(request), request.params.teamId, request.params.userId),
  );

  const rolesTags = ['Custom Roles'];
  app.get(
    '/custom-roles',
    {
      config: { right: 'users:read' },
      schema: { operationId: 'listCustomRoles', summary: 'Custom roles of the workspace', description: 'Every custom role, by name (case-insensitive).', tags: rolesTags, response: { 200: CustomRoleList } },
    },
    async (request) => service.listCustomRoles(context(request)),
  );

  app.post(
    '/custom-roles',
    {
      config: { right: 'users:write' },
      schema: {
        operationId: 'createCustomRole',
        summary: 'Create a custom role',
        description: 'A set of the API\'s rights (any of the rights table but those of SUPER_ADMIN alone: `users:write`, `incentive-providers:manage`, `test-helpers:run`), which its CUSTOM users hold.',
        tags: rolesTags,
        body: CustomRoleBody,
        response: { 201: Type.Ref(CustomRole), 400: invalid, 409: errorResponse('A custom role of that name (case-insensitively) exists.') },
      },
    },
    async (request, reply) => reply.code(201).send(await service.createCustomRole(context(request), request.body)),
  );

  app.patch(
    '/custom-roles/:roleId',
    {
      config: { right: 'users:write' },
      schema: {
        operationId: 'updateCustomRole',
        summary: 'Rename a custom role or change its rights',
        description: 'Its users hold the new rights at once, on every instance (their keys limited to rights the role no longer has lose them).',
        tags: rolesTags,
        params: CustomRoleIdParams,
        body: UpdateCustomRoleBody,
        response: { 200: Type.Ref(CustomRole), 400: invalid, 404: roleNotFound, 409: errorResponse('Another custom role of that name (case-insensitively) exists.') },
      },
    },
    async (request) => service.updateCustomRole(context(request), request.params.roleId, request.body),
  );

  app.delete(
    '/custom-roles/:roleId',
    {
      config: { right: 'users:write' },
      schema: {
        operationId: 'deleteCustomRole',
        summary: 'Delete a custom role',
        tags: rolesTags,
        params: CustomRoleIdParams,
        response: { 200: Type.Object({ customRoleId: Type.String() }, { examples: [{ customRoleId: 'crl_01JD0000000000000000000000' }] }), 400: invalid, 404: roleNotFound, 409: errorResponse('Users hold the custom role.') },
      },
    },
    async (request) => service.deleteCustomRole(context(request), request.params.roleId),
  );

  const keyTags = ['API Keys'];
  app.post(
    '/api-keys',
    {
      config: { right: 'api-keys:write' },
      schema: {
        operationId: 'createApiKey',
        summary: 'Create an API key of your own',
        description:
          "A key for the caller's own user, with a subset of the caller's own rights (default: all of them), the personal-data and screener rights only if the caller's credential has them, and an optional expiry (in the future, at most 365 days ahead). " +
          'The answer holds the secret, shown this once.',
        tags: keyTags,
        body: CreateApiKeyBody,
        response: { 201: ApiKeyWithSecret, 400: invalid },
      },
    },
    async (request, reply) => reply.code(201).send(await service.createKey(context(request), request.body)),
  );

  app.get(
    '/api-keys',
    {
      config: { right: 'api-keys:write' },
      schema: {
        operationId: 'listApiKeys',
        summary: 'Your own API keys',
        description: "The caller's user's keys (CLI-made tokens too, revoked ones included), oldest first, keyset-paged. Never a secret.",
        tags: keyTags,
        querystring: ListQuery,
        response: { 200: KeyPage, 400: invalid },
      },
    },
    async (request) => {
      const { workspaceId, userId } = principalOf(request);
      return listPage(deps.cursors, cursorScope(workspaceId, `api-keys:${userId}`), request.query, (key) => key.keyId, (after, size) =>
        service.listKeys(context(request), userId, after, size),
      );
    },
  );

  app.delete(
    '/api-keys/:keyId',
    {
      config: { right: 'api-keys:write' },
      schema: {
        operationId: 'revokeApiKey',
        summary: 'Revoke an API key of your own',
        description: 'It answers 401 from then on, on every instance. Revoking a revoked key changes nothing.',
        tags: keyTags,
        params: KeyIdParams,
        response: { 200: Type.Ref(ApiKey), 400: invalid, 404: keyNotFound },
      },
    },
    async (request) => service.revokeKey(context(request), principalOf(request).userId, request.params.keyId),
  );

  app.get(
    '/users/:userId/api-keys',
    {
      config: { right: 'users:write' },
      schema: {
        operationId: 'listUserApiKeys',
        summary: "A user's API keys",
        description: 'For who administers the workspace: any user\'s keys, as GET /api-keys shows one\'s own.',
        tags: keyTags,
        params: UserIdParams,
        querystring: ListQuery,
        response: { 200: KeyPage, 400: invalid, 404: userNotFound },
      },
    },
    async (request) => {
      const { workspaceId } = principalOf(request);
      const { userId } = request.params;
      await service.requireUser(context(request), userId);
      return listPage(deps.cursors, cursorScope(workspaceId, `api-keys:${userId}`), request.query, (key) => key.keyId, (after, size) =>
        service.listKeys(context(request), userId, after, size),
      );
    },
  );

  app.delete(
    '/users/:userId/api-keys/:keyId',
    {
      config: { right: 'users:write' },
      schema: {
        operationId: 'revokeUserApiKey',
        summary: "Revoke a user's API key",
        description: 'For who administers the workspace: as DELETE /api-keys/{keyId} for one\'s own.',
        tags: keyTags,
        params: UserKeyParams,
        response: { 200: Type.Ref(ApiKey), 400: invalid, 404: keyNotFound },
      },
    },
    async (request) => service.revokeKey(context(request), request.params.userId, request.params.keyId),
  );
};

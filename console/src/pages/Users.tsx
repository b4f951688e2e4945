import { type Schema, unwrap } from '@recruit-ops/sdk/browser';
import { useState } from 'preact/hooks';
import { describeProblem, type Problem } from '../api.js';
import { ErrorNotice } from '../components/ErrorNotice.js';
import { Pager } from '../components/Pager.js';
import { humanize } from '../components/StatusBadge.js';
import { useCursorPages, useLoad } from '../hooks.js';
import { useMay } from '../rights.js';
import { useSession } from '../session.js';

type WorkspaceUser = Schema<'WorkspaceUser'>;
type Role = WorkspaceUser['role'];
const roles: readonly Role[] = ['SUPER_ADMIN', 'OPS_MANAGER', 'RESEARCHER', 'DEVELOPER', 'COLLABORATOR', 'OBSERVER', 'CUSTOM'];
const pageSize = 25;

/** The workspace's users: their role (changed here, with a custom role for CUSTOM), teams and status (deactivated or reactivated here). */
export function UsersPage() {
  const { api } = useSession().session;
  const mayChange = useMay('patch /users/{userId}');
  const pages = useCursorPages([]);
  const users = useLoad(async () => unwrap(await api.GET('/users', { params: { query: { size: pageSize, ...(pages.cursor ? { startCursor: pages.cursor } : {}) } } })), [api, pages.cursor]);
  const customRoles = useLoad(async () => unwrap(await api.GET('/custom-roles')), [api]);
  const [problem, setProblem] = useState<Problem | undefined>();
  const [done, setDone] = useState<string | undefined>();

  const act = async (work: () => Promise<WorkspaceUser>, what: (user: WorkspaceUser) => string) => {
    setProblem(undefined);
    setDone(undefined);
    try {
      const user = await work();
      setDone(what(user));
      users.reload();
    } catch (error) {
      setProblem(describeProblem(error));
    }
  };
  const changeRole = (user: WorkspaceUser, value: string) => {
    const [role, customRoleId] = value.split(':') as [Role, string | undefined];
    return act(
      async () => unwrap(await api.PATCH('/users/{userId}', { params: { path: { userId: user.userId } }, body: { role, ...(customRoleId ? { customRoleId } : {}) } })),
      (changed) => `${changed.fullname || changed.email} is now ${humanize(changed.role)}.`,
    );
  };
  const setActive = (user: WorkspaceUser, active: boolean) =>
    act(
      async () => unwrap(await api.POST(active ? '/users/{userId}/reactivate' : '/users/{userId}/deactivate', { params: { path: { userId: user.userId } } })),
      (changed) => `${changed.fullname || changed.email} is ${humanize(changed.status).toLowerCase()}.`,
    );
  const roleChoices = [
    ...roles.filter((role) => role !== 'CUSTOM').map((role) => ({ value: role, label: humanize(role) })),
    ...(customRoles.data?.results ?? []).map((custom) => ({ value: `CUSTOM:${custom.customRoleId}`, label: `Custom: ${custom.name}` })),
  ];

  return (
    <>
      <header class="page-header">
        <h1>Users</h1>
      </header>
      <ErrorNotice problem={users.problem ?? problem} />
      {done && (
        <p class="notice" role="status">
          {done}
        </p>
      )}
      <div aria-busy={users.loading}>
        {users.data && (
          <>
            <table>
              <caption>Users of the workspace</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Email</th>
                  <th scope="col">Role</th>
                  <th scope="col">Teams</th>
                  <th scope="col">Status</th>
                  {mayChange && <th scope="col">Actions</th>}
                </tr>
              </thead>
              <tbody>
                {users.data.results.map((user) => (
                  <tr key={user.userId} data-testid={`user-${user.email}`}>
                    <td>{user.fullname}</td>
                    <td>{user.email}</td>
                    <td>
                      {mayChange ? (
                        <select
                          aria-label={`Role of ${user.fullname || user.email}`}
                          value={user.role === 'CUSTOM' ? `CUSTOM:${user.customRoleId}` : user.role}
                          onChange={(event) => void changeRole(user, event.currentTarget.value)}
                        >
                          {roleChoices.map((choice) => (
                            <option key={choice.value} value={choice.value}>
                              {choice.label}
                            </option>
                          ))}
                        </select>
                      ) : (
                        humanize(user.role)
                      )}
                    </td>
                    <td>{user.teams.map((team) => team.name).join(', ')}</td>
                    <td>{humanize(user.status)}</td>
                    {mayChange && (
                      <td>
                        {user.status === 'DEACTIVATED' ? (
                          <button type="button" class="secondary" onClick={() => void setActive(user, true)}>
                            Reactivate {user.fullname || user.email}
                          </button>
                        ) : (
                          <button type="button" class="secondary" onClick={() => void setActive(user, false)}>
                            Deactivate {user.fullname || user.email}
                          </button>
                        )}
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
            <Pager
              label="Pages of users"
              pageNumber={pages.pageNumber}
              total={users.data.total}
              shown={users.data.results.length}
              hasNextPage={users.data.pageInfo.hasNextPage}
              onPrevious={pages.previous}
              onNext={() => users.data && pages.next(users.data.pageInfo.endCursor)}
            />
          </>
        )}
      </div>
    </>
  );
}

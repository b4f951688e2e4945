import { unwrap } from '@recruit-ops/sdk/browser';
import { useState } from 'preact/hooks';
import { describeProblem, fieldMessage, type Problem } from '../api.js';
import { ErrorNotice } from '../components/ErrorNotice.js';
import { Field } from '../components/Field.js';
import { useLoad } from '../hooks.js';
import { useMay } from '../rights.js';
import { useSession } from '../session.js';

/** The workspace's teams: created, renamed and deleted here, members added and removed. */
export function TeamsPage() {
  const { api } = useSession().session;
  const mayChange = useMay('post /teams');
  const teams = useLoad(async () => unwrap(await api.GET('/teams')), [api]);
  // The members of each team, from one page of users per team filter (a workspace's teams are few).
  const members = useLoad(
    async () => {
      const entries = await Promise.all(
        (teams.data?.results ?? []).map(async (team) => [team.teamId, unwrap(await api.GET('/users', { params: { query: { teamId: team.teamId, size: 100 } } })).results] as const),
      );
      return new Map(entries);
    },
    [api, teams.data],
  );
  const everyone = useLoad(async () => unwrap(await api.GET('/users', { params: { query: { status: 'ACTIVE', size: 100 } } })), [api]);
  const [name, setName] = useState('');
  const [problem, setProblem] = useState<Problem | undefined>();
  const [renaming, setRenaming] = useState<Record<string, string>>({});
  const [adding, setAdding] = useState<Record<string, string>>({});

  const act = async (work: () => Promise<unknown>) => {
    setProblem(undefined);
    try {
      await work();
      teams.reload();
      return true;
    } catch (error) {
      setProblem(describeProblem(error));
      return false;
    }
  };

  return (
    <>
      <header class="page-header">
        <h1>Teams</h1>
      </header>
      <ErrorNotice problem={teams.problem ?? problem} />
      {mayChange && (
        <form
          class="inline-form"
          onSubmit={(event) => {
            event.preventDefault();
            void act(async () => unwrap(await api.POST('/teams', { body: { name } }))).then((made) => made && setName(''));
          }}
        >
          <Field label="New team name" error={fieldMessage(problem, ['name'])}>
            {(control) => <input {...control} value={name} onInput={(event) => setName(event.currentTarget.value)} required />}
          </Field>
          <button type="submit">Create team</button>
        </form>
      )}
      <div aria-busy={teams.loading}>
        {teams.data?.results.length === 0 && <p>No team yet.</p>}
        {teams.data?.results.map((team) => {
          const teamMembers = members.data?.get(team.teamId) ?? [];
          const candidates = (everyone.data?.results ?? []).filter((user) => !teamMembers.some((member) => member.userId === user.userId));
          return (
            <section key={team.teamId} aria-labelledby={`team-${team.teamId}`} class="team">
              <h2 id={`team-${team.teamId}`}>{team.name}</h2>
              <ul aria-label={`Members of ${team.name}`}>
                {teamMembers.map((member) => (
                  <li key={member.userId}>
                    {member.fullname || member.email}{' '}
                    {mayChange && (
                      <button
                        type="button"
                        class="secondary outline"
                        onClick={() => void act(async () => unwrap(await api.DELETE('/teams/{teamId}/members/{userId}', { params: { path: { teamId: team.teamId, userId: member.userId } } })))}
                      >
                        Remove {member.fullname || member.email} from {team.name}
                      </button>
                    )}
                  </li>
                ))}
                {teamMembers.length === 0 && <li class="muted">No member.</li>}
              </ul>
              {mayChange && (
                <div class="inline-form">
                  <label for={`add-${team.teamId}`}>Add a member to {team.name}</label>
                  <select id={`add-${team.teamId}`} value={adding[team.teamId] ?? ''} onChange={(event) => setAdding({ ...adding, [team.teamId]: event.currentTarget.value })}>
                    <option value="">Choose a user</option>
                    {candidates.map((user) => (
                      <option key={user.userId} value={user.userId}>
                        {user.fullname || user.email}
                      </option>
                    ))}
                  </select>
                  <button
                    type="button"
                    disabled={!adding[team.teamId]}
                    onClick={() => void act(async () => unwrap(await api.PUT('/teams/{teamId}/members/{userId}', { params: { path: { teamId: team.teamId, userId: adding[team.teamId]! } } })))}
                  >
                    Add to {team.name}
                  </button>
                  <label for={`rename-${team.teamId}`}>New name for {team.name}</label>
                  <input id={`rename-${team.teamId}`} value={renaming[team.teamId] ?? ''} onInput={(event) => setRenaming({ ...renaming, [team.teamId]: event.currentTarget.value })} />
                  <button
                    type="button"
                    class="secondary"
                    disabled={!renaming[team.teamId]}
                    onClick={() => void act(async () => unwrap(await api.PATCH('/teams/{teamId}', { params: { path: { teamId: team.teamId } }, body: { name: renaming[team.teamId]! } })))}
                  >
                    Rename {team.name}
                  </button>
                  <button type="button" class="secondary outline" onClick={() => void act(async () => unwrap(await api.DELETE('/teams/{teamId}', { params: { path: { teamId: team.teamId } } })))}>
                    Delete {team.name}
                  </button>
                </div>
              )}
            </section>
          );
        })}
      </div>
    </>
  );
}

import { type Schema, unwrap } from '@recruit-ops/sdk/browser';
import { useState } from 'preact/hooks';
import { describeProblem, fieldMessage, type Problem } from '../api.js';
import { ErrorNotice } from '../components/ErrorNotice.js';
import { Field } from '../components/Field.js';
import { Moment } from '../components/Moment.js';
import { useLoad } from '../hooks.js';
import { useSession } from '../session.js';

type ApiKey = Schema<'ApiKey'>;

/** The rights a key may be limited to, as the page offers them: reading, or reading and writing, what the caller may. */
const rightGroups = [
  { label: 'Read studies, people and participants', rights: ['studies:read', 'people:read', 'participants:read'] },
  { label: 'Write studies and participants', rights: ['studies:write', 'participants:write'] },
] as const;

/** The signed-in user's own API keys: made here with a name, some of their rights and an expiry (the secret shown once), and revoked. */
export function ApiKeysPage() {
  const { api } = useSession().session;
  const keys = useLoad(async () => unwrap(await api.GET('/api-keys', { params: { query: { size: 100 } } })), [api]);
  const [name, setName] = useState('');
  const [limited, setLimited] = useState<Record<number, boolean>>({});
  const [days, setDays] = useState('90');
  const [secret, setSecret] = useState<{ name: string; secret: string } | undefined>();
  const [problem, setProblem] = useState<Problem | undefined>();

  const create = async () => {
    setProblem(undefined);
    setSecret(undefined);
    const chosen = rightGroups.flatMap((group, index) => (limited[index] ? [...group.rights] : []));
    try {
      const made = unwrap(
        await api.POST('/api-keys', {
          body: {
            name,
            // With no group ticked the key holds all of the user's rights; else the ticked ones (and making its own keys).
            ...(chosen.length > 0 ? { rights: [...chosen, 'api-keys:write'] } : {}),
            ...(days ? { expiresAt: new Date(Date.now() + Number(days) * 86_400_000).toISOString() } : {}),
          },
        }),
      );
      setSecret({ name: made.name, secret: made.secret });
      setName('');
      keys.reload();
    } catch (error) {
      setProblem(describeProblem(error));
    }
  };
  const revoke = async (key: ApiKey) => {
    setProblem(undefined);
    try {
      unwrap(await api.DELETE('/api-keys/{keyId}', { params: { path: { keyId: key.keyId } } }));
      keys.reload();
    } catch (error) {
      setProblem(describeProblem(error));
    }
  };

  return (
    <>
      <header class="page-header">
        <h1>API keys</h1>
      </header>
      <ErrorNotice problem={keys.problem ?? problem} />
      {secret && (
        <div class="notice" role="status">
          <p>
            The key “{secret.name}” was made. Copy its secret now: it is not shown again.
          </p>
          <p>
            <code data-testid="new-key-secret">{secret.secret}</code>
          </p>
        </div>
      )}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void create();
        }}
      >
        <Field label="Key name" error={fieldMessage(problem, ['name'])}>
          {(control) => <input {...control} value={name} onInput={(event) => setName(event.currentTarget.value)} required maxLength={100} />}
        </Field>
        <fieldset>
          <legend>Limit the key to (none ticked: all of your rights)</legend>
          {rightGroups.map((group, index) => (
            <label key={group.label}>
              <input type="checkbox" checked={limited[index] ?? false} onChange={(event) => setLimited({ ...limited, [index]: event.currentTarget.checked })} /> {group.label}
            </label>
          ))}
        </fieldset>
        <Field label="Expires after (days, at most 365; empty: never)" error={fieldMessage(problem, ['expiresAt'])}>
          {(control) => <input {...control} type="number" min={1} max={365} value={days} onInput={(event) => setDays(event.currentTarget.value)} />}
        </Field>
        <button type="submit">Create key</button>
      </form>
      <div aria-busy={keys.loading}>
        {keys.data && (
          <table>
            <caption>Your API keys</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Rights</th>
                <th scope="col">Created</th>
                <th scope="col">Expires</th>
                <th scope="col">Last used</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {keys.data.results.map((key) => (
                <tr key={key.keyId}>
                  <td>{key.name || 'Made with the command line'}</td>
                  <td>{key.rights === null ? 'All of yours' : key.rights.join(', ')}</td>
                  <td>
                    <Moment at={key.createdAt} as="day" />
                  </td>
                  <td>{key.expiresAt ? <Moment at={key.expiresAt} as="day" /> : 'Never'}</td>
                  <td>{key.lastUsedAt ? <Moment at={key.lastUsedAt} as="day" /> : 'Not yet'}</td>
                  <td>
                    {key.revokedAt ? (
                      'Revoked'
                    ) : (
                      <button type="button" class="secondary outline" onClick={() => void revoke(key)}>
                        Revoke {key.name || key.keyId}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
    </>
  );
}

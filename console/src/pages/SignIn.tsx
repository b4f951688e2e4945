import { useState } from 'preact/hooks';
import { describeProblem, type Problem } from '../api.js';
import { Field } from '../components/Field.js';
import { openSession, type Session } from '../session.js';

/**
 * Sign in with an API token (`npm run cli -- workspace create`, `token create`): checked with
 * GET /me, kept in this tab's sessionStorage. A refused token is said in words beside the field.
 */
export function SignInPage({ onSignedIn, initialProblem }: { onSignedIn(session: Session): void; initialProblem?: Problem | undefined }) {
  const [token, setToken] = useState('');
  const [problem, setProblem] = useState<Problem | undefined>(initialProblem);
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    const given = token.trim();
    if (!given) {
      setProblem({ status: 0, summary: 'Paste an API token to sign in.', fields: [] });
      return;
    }
    setBusy(true);
    try {
      onSignedIn(await openSession(given));
    } catch (error) {
      setProblem(describeProblem(error));
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="container sign-in">
      <h1>Sign in to the console</h1>
      <form onSubmit={(event) => void submit(event)} noValidate>
        <Field label="API token" error={problem?.summary} hint="A token from your administrator (it starts with rk_). It is kept in this tab only, until you sign out or close it.">
          {(control) => (
            <input
              {...control}
              name="token"
              type="password"
              autocomplete="off"
              spellcheck={false}
              value={token}
              onInput={(event) => setToken(event.currentTarget.value)}
            />
          )}
        </Field>
        <button type="submit" aria-busy={busy} disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}

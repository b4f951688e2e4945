import { useState } from 'preact/hooks';
import { unwrap } from '@recruit-ops/sdk/browser';
import { createVisitorApi, describeProblem, fieldMessage, type Problem } from '../api.js';
import { Field } from '../components/Field.js';
import { openCookieSession, type Session } from '../session.js';

/** The token of an emailed link: after '#', which the browser never sends to the server. */
export const tokenInAddress = () => location.hash.replace(/^#/, '');

/**
 * An invitation's page (`/console/invitation#<token>`): accept it with a password to sign in with
 * later, or without one (then sign in by emailed link). Accepting signs the user in.
 */
export function InvitationPage({ onSignedIn }: { onSignedIn(session: Session): void }) {
  const [password, setPassword] = useState('');
  const [problem, setProblem] = useState<Problem | undefined>();
  const [busy, setBusy] = useState(false);

  async function accept(withPassword: boolean) {
    setBusy(true);
    setProblem(undefined);
    try {
      const body = { token: tokenInAddress(), ...(withPassword ? { password } : {}) };
      const started = unwrap(await createVisitorApi().POST('/session/invitation', { body }));
      history.replaceState(null, '', location.pathname);
      onSignedIn(await openCookieSession(started.csrfToken));
    } catch (error) {
      setProblem(describeProblem(error));
    } finally {
      setBusy(false);
    }
  }

  const linkProblem = fieldMessage(problem, ['token']);
  return (
    <main class="container sign-in">
      <h1>Accept your invitation</h1>
      {linkProblem && (
        <p role="alert" class="error" data-testid="invitation-problem">
          {linkProblem}
        </p>
      )}
      <form
        noValidate
        aria-label="Accept the invitation"
        onSubmit={(event) => {
          event.preventDefault();
          void accept(true);
        }}
      >
        <Field label="Choose a password" error={fieldMessage(problem, ['password'])} hint="At least 12 characters. You can also skip it and sign in by emailed link each time.">
          {(control) => <input {...control} name="password" type="password" autocomplete="new-password" minLength={12} value={password} onInput={(event) => setPassword(event.currentTarget.value)} />}
        </Field>
        <div class="grid">
          <button type="submit" aria-busy={busy} disabled={busy || password.length === 0}>
            Set the password and continue
          </button>
          <button type="button" class="secondary" disabled={busy} onClick={() => void accept(false)}>
            Continue without a password
          </button>
        </div>
      </form>
    </main>
  );
}

/** A sign-in link's page (`/console/sign-in/link#<token>`): one button spends it (mail scanners that open links spend nothing). */
export function SignInLinkPage({ onSignedIn }: { onSignedIn(session: Session): void }) {
  const [problem, setProblem] = useState<Problem | undefined>();
  const [busy, setBusy] = useState(false);
  async function redeem() {
    setBusy(true);
    setProblem(undefined);
    try {
      const started = unwrap(await createVisitorApi().POST('/session/link/redeem', { body: { token: tokenInAddress() } }));
      history.replaceState(null, '', location.pathname);
      onSignedIn(await openCookieSession(started.csrfToken));
    } catch (error) {
      setProblem(describeProblem(error));
    } finally {
      setBusy(false);
    }
  }
  const linkProblem = fieldMessage(problem, ['token']) ?? problem?.summary;
  return (
    <main class="container sign-in">
      <h1>Sign in</h1>
      {linkProblem && (
        <p role="alert" class="error" data-testid="link-problem">
          {linkProblem}
        </p>
      )}
      <button type="button" aria-busy={busy} disabled={busy} onClick={() => void redeem()}>
        Continue to the console
      </button>
    </main>
  );
}

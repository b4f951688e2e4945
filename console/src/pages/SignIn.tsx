import { useState } from 'preact/hooks';
import { unwrap } from '@recruit-ops/sdk/browser';
import { createVisitorApi, describeProblem, type Problem } from '../api.js';
import { Field } from '../components/Field.js';
import { openCookieSession, openSession, type Session } from '../session.js';

/** The workspace named in the address (`?workspace=acme-research`), so a team can share a link to its sign-in. */
const workspaceInAddress = () => new URLSearchParams(location.search).get('workspace') ?? '';

/** Why a single sign-on sent the browser back (`?sso_error=`, GET /v1/session/oidc/callback's reasons). */
const ssoFailures: Record<string, string> = {
  unavailable: 'This workspace has no single sign-on, or it is switched off. Sign in with your email instead.',
  expired: 'The single sign-on took longer than 10 minutes, or began in another browser. Please try again.',
  denied: 'Your identity provider did not sign you in.',
  provider: "Your identity provider's answer could not be checked. Please try again; if it happens again, ask your administrator to check the single sign-on settings.",
  no_account: 'Your identity provider signed you in, but you are not a user of this workspace. Ask an administrator to invite you.',
  unverified_email: 'Your identity provider did not confirm your email address, so it cannot be matched to a user of this workspace.',
  deactivated: 'Your account in this workspace is deactivated. Ask an administrator to reactivate it.',
};

/** The problem a single sign-on came back with, once (the address is cleaned so that a reload does not repeat it). */
function ssoProblem(): Problem | undefined {
  const reason = new URLSearchParams(location.search).get('sso_error');
  if (reason === null) return undefined;
  history.replaceState(null, '', location.pathname);
  return { status: 0, summary: ssoFailures[reason] ?? 'The single sign-on did not sign you in. Please try again.', fields: [] };
}

/**
 * Sign in: by password, or by a link emailed to the address; developers may still paste an API
 * token (`npm run cli -- token create`), kept in this tab's sessionStorage. A session started
 * here lives in an HttpOnly cookie the page never reads.
 */
export function SignInPage({ onSignedIn, initialProblem }: { onSignedIn(session: Session): void; initialProblem?: Problem | undefined }) {
  const [workspace, setWorkspace] = useState(workspaceInAddress);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [token, setToken] = useState('');
  const [returned] = useState(ssoProblem);
  const [problem, setProblem] = useState<Problem | undefined>(initialProblem ?? returned);
  /** Which form the problem is of: the token's is said beside its field. */
  const [problemOf, setProblemOf] = useState<'account' | 'token'>(initialProblem && !returned ? 'token' : 'account');
  const [linkSent, setLinkSent] = useState(false);
  const [busy, setBusy] = useState(false);

  async function attempt(work: () => Promise<void>, of: 'account' | 'token' = 'account') {
    setBusy(true);
    setProblem(undefined);
    setProblemOf(of);
    try {
      await work();
    } catch (error) {
      const described = describeProblem(error);
      setProblem(described.status === 401 && of === 'account' ? { ...described, summary: 'The email or the password is wrong.' } : described);
    } finally {
      setBusy(false);
    }
  }

  const withPassword = (event: Event) => {
    event.preventDefault();
    void attempt(async () => {
      const started = unwrap(await createVisitorApi().POST('/session/password', { body: { workspace: workspace.trim(), email: email.trim(), password } }));
      onSignedIn(await openCookieSession(started.csrfToken));
    });
  };
  const byLink = (event: Event) => {
    event.preventDefault();
    void attempt(async () => {
      unwrap(await createVisitorApi().POST('/session/link', { body: { workspace: workspace.trim(), email: email.trim() } }));
      setLinkSent(true);
    });
  };
  /**
   * To the workspace's identity provider: the API's start redirects there. A navigation, not a form
   * submission: the console's CSP (form-action 'self') would stop a form's redirect to the provider.
   */
  const bySso = (event: Event) => {
    event.preventDefault();
    const slug = workspace.trim();
    if (slug === '') {
      setProblemOf('account');
      setProblem({ status: 0, summary: "Enter your workspace's short name first.", fields: [] });
      return;
    }
    setBusy(true);
    location.assign(`/v1/session/oidc/start?workspace=${encodeURIComponent(slug)}`);
  };
  const withToken = (event: Event) => {
    event.preventDefault();
    const given = token.trim();
    if (!given) {
      setProblemOf('token');
      setProblem({ status: 0, summary: 'Paste an API token to sign in.', fields: [] });
      return;
    }
    void attempt(async () => onSignedIn(await openSession(given)), 'token');
  };

  return (
    <main class="container sign-in">
      <h1>Sign in to the console</h1>
      {problem && problemOf === 'account' && (
        <p role="alert" class="error" data-testid="sign-in-problem">
          {problem.summary}
        </p>
      )}
      {linkSent && (
        <p role="status" data-testid="link-sent">
          If this address belongs to a user of the workspace, a sign-in link is on its way. It works once, for 15 minutes.
        </p>
      )}
      <form onSubmit={withPassword} noValidate aria-label="Sign in">
        <Field label="Workspace" hint="Your workspace's short name, as in your invitation or from your administrator.">
          {(control) => <input {...control} name="workspace" autocomplete="organization" spellcheck={false} required value={workspace} onInput={(event) => setWorkspace(event.currentTarget.value)} />}
        </Field>
        <Field label="Email">
          {(control) => <input {...control} name="email" type="email" autocomplete="username" required value={email} onInput={(event) => setEmail(event.currentTarget.value)} />}
        </Field>
        <Field label="Password" hint="Leave it empty and choose “Email me a link” if you have none.">
          {(control) => <input {...control} name="password" type="password" autocomplete="current-password" value={password} onInput={(event) => setPassword(event.currentTarget.value)} />}
        </Field>
        <div class="grid">
          <button type="submit" aria-busy={busy} disabled={busy}>
            Sign in
          </button>
          <button type="button" class="secondary" disabled={busy} onClick={byLink}>
            Email me a link
          </button>
        </div>
      </form>
      <section aria-labelledby="sso-heading">
        <h2 id="sso-heading">Single sign-on</h2>
        <form onSubmit={bySso} aria-label="Single sign-on">
          <p>If your workspace signs in through your organisation's identity provider, enter its short name above and continue there.</p>
          <button type="submit" class="secondary" disabled={busy}>
            Continue with single sign-on
          </button>
        </form>
      </section>
      <section aria-labelledby="token-heading">
        <h2 id="token-heading">Developers</h2>
        <form onSubmit={withToken} noValidate aria-label="Developer sign-in">
          <Field label="API token" error={problemOf === 'token' ? problem?.summary : undefined} hint="A token from your administrator (it starts with rk_). It is kept in this tab only, until you sign out or close it.">
            {(control) => (
              <input {...control} name="token" type="password" autocomplete="off" spellcheck={false} value={token} onInput={(event) => setToken(event.currentTarget.value)} />
            )}
          </Field>
          <button type="submit" class="secondary" aria-busy={busy} disabled={busy}>
            Sign in with the token
          </button>
        </form>
      </section>
    </main>
  );
}

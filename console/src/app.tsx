import { useEffect, useState } from 'preact/hooks';
import { Link, Redirect, Route, Router, Switch } from 'wouter-preact';
import { describeProblem, type Problem } from './api.js';
import { AuditPage } from './pages/Audit.js';
import { humanize } from './components/StatusBadge.js';
import { CreateStudyPage } from './pages/CreateStudy.js';
import { ImportsPage } from './pages/Imports.js';
import { NotFoundPage } from './pages/NotFound.js';
import { PersonPage } from './pages/Person.js';
import { ApiKeysPage } from './pages/ApiKeys.js';
import { TeamsPage } from './pages/Teams.js';
import { UsersPage } from './pages/Users.js';
import { SignInPage } from './pages/SignIn.js';
import { InvitationPage, SignInLinkPage } from './pages/Invitation.js';
import { StudiesPage } from './pages/Studies.js';
import { StudyPage } from './pages/Study.js';
import { StudyEventsPage } from './pages/StudyEvents.js';
import { lazyPage } from './lazy.js';
import { endSession, forgetToken, hasCookieSession, openCookieSession, openSession, type Session, SessionContext, storedToken } from './session.js';
import { roleMay } from './rights.js';

/** Where the server serves the console (src/http/console.ts); vite.config.ts builds for it. */
export const consoleBase = '/console';

// The search pages (filters/) load as a chunk of their own when first shown.
const PeoplePage = lazyPage(() => import('./pages/People.js').then((module) => module.PeoplePage));
const StudySearchPage = lazyPage(() => import('./pages/StudySearch.js').then((module) => module.StudySearchPage));

/**
 * The routes, below /console. A page is one file in pages/; add its route here and, if it belongs
 * in the navigation, its link in Shell.
 */
function Routes() {
  return (
    <Switch>
      <Route path="/">
        <Redirect to="/studies" replace />
      </Route>
      <Route path="/studies" component={StudiesPage} />
      <Route path="/studies/new" component={CreateStudyPage} />
      <Route path="/studies/:studyId/search">{(params) => <StudySearchPage studyId={params.studyId} />}</Route>
      <Route path="/studies/:studyId">{(params) => <StudyPage studyId={params.studyId} />}</Route>
      <Route path="/studies/:studyId/events">{(params) => <StudyEventsPage studyId={params.studyId} />}</Route>
      <Route path="/people">{() => <PeoplePage />}</Route>
      <Route path="/people/:personId">{(params) => <PersonPage personId={params.personId} />}</Route>
      <Route path="/imports" component={ImportsPage} />
      <Route path="/users" component={UsersPage} />
      <Route path="/teams" component={TeamsPage} />
      <Route path="/api-keys" component={ApiKeysPage} />
      <Route path="/audit" component={AuditPage} />
      <Route component={NotFoundPage} />
    </Switch>
  );
}

function Shell({ session, onSignOut }: { session: Session; onSignOut(everywhere?: boolean): void }) {
  const { user } = session;
  const mayReadAudit = roleMay(user.role, 'get /audit-events');
  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="container shell-header">
        {/* Two lists that wrap: on a phone the user and "Sign out" take a line of their own, whole. */}
        <nav aria-label="Console">
          <ul class="shell-links">
            <li>
              <strong>recruit-ops</strong>
            </li>
            <li>
              <Link href="/studies">Studies</Link>
            </li>
            <li>
              <Link href="/people">People</Link>
            </li>
            <li>
              <Link href="/imports">Imports</Link>
            </li>
            <li>
              <Link href="/users">Users</Link>
            </li>
            <li>
              <Link href="/teams">Teams</Link>
            </li>
            <li>
              <Link href="/api-keys">API keys</Link>
            </li>
            {mayReadAudit && (
              <li>
                <Link href="/audit">Audit</Link>
              </li>
            )}
          </ul>
          <ul class="shell-user">
            <li class="signed-in" aria-label="Signed in as">
              <span data-testid="user-name">{user.fullname || user.email}</span> · <span data-testid="user-role">{humanize(user.role)}</span>
              {user.fullname && <span class="muted signed-in-email"> {user.email}</span>}
            </li>
            <li>
              <button type="button" class="secondary outline sign-out" onClick={() => onSignOut()}>
                Sign out
              </button>
            </li>
            {session.via === 'COOKIE' && (
              <li>
                <button type="button" class="secondary outline sign-out" onClick={() => onSignOut(true)}>
                  Sign out everywhere
                </button>
              </li>
            )}
          </ul>
        </nav>
      </header>
      <main id="main" class="container">
        <Routes />
      </main>
    </>
  );
}

type Start = { state: 'checking' } | { state: 'signed-out'; problem?: Problem } | { state: 'signed-in'; session: Session };

export function App() {
  // The pages an emailed link opens are for signing in: no session is looked for there.
  const linkPage = /\/(invitation|sign-in\/link)$/.test(location.pathname);
  // Back from the workspace's identity provider, signed in: the API set the session cookie.
  const ssoReturned = new URLSearchParams(location.search).get('sso') === 'signed-in';
  const [start, setStart] = useState<Start>(() => (!linkPage && (storedToken() || hasCookieSession() || ssoReturned) ? { state: 'checking' } : { state: 'signed-out' }));

  // A token kept from earlier in this tab (a reload) is checked again before any page shows;
  // without one, the session cookie (HttpOnly: only the API can tell whether it is still live).
  useEffect(() => {
    if (linkPage) return;
    const token = storedToken();
    if (!token) {
      if (ssoReturned) history.replaceState(null, '', `${consoleBase}/`);
      if (!hasCookieSession() && !ssoReturned) return;
      openCookieSession().then(
        (session) => setStart({ state: 'signed-in', session }),
        () => setStart({ state: 'signed-out' }),
      );
      return;
    }
    openSession(token).then(
      (session) => setStart({ state: 'signed-in', session }),
      (error: unknown) => {
        forgetToken();
        setStart({ state: 'signed-out', problem: describeProblem(error) });
      },
    );
  }, []);

  const signOut = (everywhere = false) => {
    const ending = start.state === 'signed-in' ? endSession(start.session, everywhere) : Promise.resolve();
    // Signed out on this page whatever the answer (a session already ended answers 401).
    void ending.catch(() => {}).then(() => setStart({ state: 'signed-out' }));
  };
  const signedIn = (session: Session) => {
    if (linkPage) history.replaceState(null, '', `${consoleBase}/`);
    setStart({ state: 'signed-in', session });
  };

  let content;
  if (start.state === 'checking') {
    content = (
      <main class="container" aria-busy="true">
        <h1>Signing in…</h1>
      </main>
    );
  } else if (start.state === 'signed-out') {
    content = (
      <Switch>
        <Route path="/invitation">{() => <InvitationPage onSignedIn={signedIn} />}</Route>
        <Route path="/sign-in/link">{() => <SignInLinkPage onSignedIn={signedIn} />}</Route>
        <Route>{() => <SignInPage initialProblem={start.problem} onSignedIn={signedIn} />}</Route>
      </Switch>
    );
  } else {
    content = (
      <SessionContext.Provider value={{ session: start.session, signOut }}>
        <Shell session={start.session} onSignOut={signOut} />
      </SessionContext.Provider>
    );
  }
  return <Router base={consoleBase}>{content}</Router>;
}

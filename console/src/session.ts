import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { type Schema, unwrap } from '@recruit-ops/sdk/browser';
import { createApi, createSessionApi, createVisitorApi, type RecruitClient } from './api.js';

/** The signed-in user, as GET /v1/me answers. */
export type User = Schema<'User'>;

export interface Session {
  user: User;
  /** The client that carries this session's token, or its cookie and CSRF token. */
  api: RecruitClient;
  /** How the console is signed in: a pasted API token (developers) or a session cookie. */
  via: 'TOKEN' | 'COOKIE';
}

/**
 * A mark (no secret) that this browser signed in with a session cookie: only then does a reload
 * ask the API for the session, so that a first visit makes no call that must fail.
 */
const cookieMark = 'recruit-ops.console.cookie-session';
export const hasCookieSession = () => localStorage.getItem(cookieMark) !== null;

/** The session signed in by the cookie the API just set (or set earlier, found again on a reload). */
export async function openCookieSession(csrfToken?: string): Promise<Session> {
  let csrf = csrfToken;
  try {
    csrf ??= unwrap(await createVisitorApi().GET('/session')).csrfToken;
  } catch (error) {
    localStorage.removeItem(cookieMark);
    throw error;
  }
  const api = createSessionApi(csrf);
  try {
    const user = unwrap(await api.GET('/me'));
    localStorage.setItem(cookieMark, '1');
    return { user, api, via: 'COOKIE' };
  } catch (error) {
    localStorage.removeItem(cookieMark);
    throw error;
  }
}

/** Ends the session: this one, or (everywhere) every session of the user. A token session just forgets its token. */
export async function endSession(session: Session, everywhere = false): Promise<void> {
  if (session.via === 'TOKEN') return forgetToken();
  localStorage.removeItem(cookieMark);
  if (everywhere) unwrap(await session.api.POST('/session/sign-out-everywhere'));
  else unwrap(await session.api.DELETE('/session'));
}

/**
 * The token lives in this tab's sessionStorage only: never in a URL, a cookie or localStorage, so
 * it goes when the tab closes and is never sent anywhere but in the Authorization header.
 */
const tokenKey = 'recruit-ops.console.token';

export function storedToken(): string | undefined {
  return sessionStorage.getItem(tokenKey) ?? undefined;
}

/** Checks the token with GET /me; keeps it only if the API accepted it. Throws what the call threw (see describeProblem). */
export async function openSession(token: string): Promise<Session> {
  const api = createApi(token);
  const user = unwrap(await api.GET('/me'));
  sessionStorage.setItem(tokenKey, token);
  return { user, api, via: 'TOKEN' };
}

export function forgetToken(): void {
  sessionStorage.removeItem(tokenKey);
}

export interface SessionState {
  session: Session;
  signOut(everywhere?: boolean): void;
}

export const SessionContext = createContext<SessionState | undefined>(undefined);

/** The session of a signed-in page (every page but sign-in renders inside one). */
export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSession() outside a signed-in page');
  return state;
}

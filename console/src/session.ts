import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { type Schema, unwrap } from '@recruit-ops/sdk/browser';
import { createApi, type RecruitClient } from './api.js';

/** The signed-in user, as GET /v1/me answers. */
export type User = Schema<'User'>;

export interface Session {
  user: User;
  /** The client that carries this session's token. */
  api: RecruitClient;
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
  return { user, api };
}

export function forgetToken(): void {
  sessionStorage.removeItem(tokenKey);
}

export interface SessionState {
  session: Session;
  signOut(): void;
}

export const SessionContext = createContext<SessionState | undefined>(undefined);

/** The session of a signed-in page (every page but sign-in renders inside one). */
export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSession() outside a signed-in page');
  return state;
}

import { createHmac } from 'node:crypto';
import { attributeWrite } from '../../http/audit-actor.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { VNode } from 'preact';
import type { ServiceDeps } from '../../context.js';
import type { DB, PropertyValue } from '../../db/schema.js';
import { ApiError } from '../../http/errors.js';
import type { RateLimiter } from '../../http/rate-limit.js';
import { consentsOfPerson, signedCopyForPerson, withdrawForPerson } from '../../families/consent/page.js';
import { messagesOfPerson } from '../../families/messages/service.js';
import { participationsOfPerson, statusEventsOfPerson, stopStudyMessages } from '../../families/participants/service.js';
import { deletePerson, getPerson, setOptedOut, updatePerson } from '../../families/people/service.js';
import * as access from '../../families/person-access/service.js';
import { editableByPerson, type EditableProperty, propertyNames } from '../../families/properties/service.js';
import { answersOfParticipants } from '../../families/screener-responses/service.js';
import { chooseLocale, type MessageKey, translator, type Translator } from '../i18n.js';
import { NoticePage } from '../layout.js';
import { formToken, formTokenIsValid, isCrossSitePost, setPageHeaders } from '../security.js';
import { ContinuePage, EraseConfirmPage, HubPage, type HubDone, type ProfileField, type SessionView, SignInPage, type StudyState, type StudyView } from './pages.js';
import { bookingCalendarFile } from '../../families/scheduling/icalendar.js';
import { liveBookingsOfPerson } from '../../families/scheduling/service.js';
import { issueLink } from '../../families/participant-links/service.js';

/** The session cookie: HttpOnly, SameSite=Lax, Path=/me, Secure when PUBLIC_URL is https. */
export const sessionCookieName = 'me_session';
/** How many sign-in links one address may ask for in a rate-limit window. */
export const signInPerEmailMax = 5;

type Posted = Record<string, string[]>;

export interface HubPagesOptions {
  deps: ServiceDeps;
  formKey: Buffer;
  sendPage: (reply: FastifyReply, status: number, page: VNode) => FastifyReply;
}

const WORKSPACE_ID = /^[A-Za-z0-9_-]{1,100}$/;
const ID = /^[A-Za-z0-9_-]{1,100}$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const TEXT_MAX = 500;

function cookieOf(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

/** The state of a participation as the person reads it. */
function stateOf(row: Awaited<ReturnType<typeof participationsOfPerson>>[number]): StudyState {
  if (['COMPLETED', 'CANCELED', 'NO_SHOW'].includes(row.status) || row.study_status === 'CLOSED') return 'past';
  if (row.status === 'SCHEDULED') return 'booked';
  if (row.screener_submitted_at !== null || ['SUBMITTED', 'QUALIFIED', 'DISQUALIFIED'].includes(row.screener_state)) return 'answered';
  if (row.status === 'INVITED' || row.screener_state === 'SCREENER_SENT') return 'invited';
  return 'added';
}

/** A value as the form shows it. */
function shownOf(property: EditableProperty, value: PropertyValue | undefined): string[] {
  if (value === undefined) return [];
  if (Array.isArray(value)) return value;
  if (typeof value === 'boolean') return [value ? 'yes' : 'no'];
  if (property.propertyType === 'DATETIME' && typeof value === 'string') return [value.slice(0, 10)];
  return [typeof value === 'object' ? '' : String(value)];
}

/** A posted field as the value it stands for (null: remove it), or the error that names why not. */
function valueOf(property: EditableProperty, posted: string[], i18n: Translator): { value: PropertyValue | null } | { error: string } {
  const first = (posted.find((value) => value !== '') ?? '').normalize('NFC').trim();
  const options = property.options.map((option) => option.name);
  switch (property.propertyType) {
    case 'STRING':
      if ([...first].length > TEXT_MAX || /[\p{Cc}]/u.test(first)) return { error: i18n.t('hub.profile.errors.tooLong', { max: TEXT_MAX }) };
      return { value: first === '' ? null : first };
    case 'NUMBER': {
      if (first === '') return { value: null };
      const number = /^[+-]?\d{1,15}([.,]\d{1,10})?$/.test(first) ? Number(first.replace(',', '.')) : NaN;
      return Number.isFinite(number) ? { value: number } : { error: i18n.t('hub.profile.errors.number') };
    }
    case 'DATETIME': {
      if (first === '') return { value: null };
      const date = /^\d{4}-\d{2}-\d{2}$/.test(first) ? new Date(`${first}T00:00:00.000Z`) : undefined;
      return date && !Number.isNaN(date.getTime()) && date.toISOString().startsWith(first) ? { value: date.toISOString() } : { error: i18n.t('hub.profile.errors.date') };
    }
    case 'BOOLEAN':
      if (first === '') return { value: null };
      return first === 'yes' ? { value: true } : first === 'no' ? { value: false } : { error: i18n.t('hub.profile.errors.choice') };
    case 'SINGLE_SELECT':
      if (first === '') return { value: null };
      return options.includes(first) ? { value: first } : { error: i18n.t('hub.profile.errors.choice') };
    case 'MULTI_SELECT': {
      const chosen = [...new Set(posted.filter((value) => value !== ''))];
      if (chosen.some((value) => !options.includes(value))) return { error: i18n.t('hub.profile.errors.choice') };
      return { value: chosen.length === 0 ? null : chosen };
    }
    default:
      return { error: i18n.t('hub.profile.errors.choice') };
  }
}

/**
 * A page of the person's own (issue 34, item 6), under /me: sign-in by an emailed link, then the
 * hub, where the person reads their studies, sessions and consents, edits the details the
 * workspace lets them edit, stops messages, downloads their data and erases it. Every change goes
 * through the families' own services (the same writers, events and webhooks as a team's change).
 * Registered inside the participant pages' plugin: public routes, their form parser and headers.
 */
export function registerHubPages(app: FastifyInstance, options: HubPagesOptions): void {
  const { deps, formKey, sendPage } = options;
  const perAddress: RateLimiter = deps.limiter.withBudget({ name: 'person-page-address', max: deps.config.participantRateLimitMax });
  const perEmail: RateLimiter = deps.limiter.withBudget({ name: 'person-sign-in-email', max: signInPerEmailMax });
  const secureCookie = (deps.config.publicUrl ?? '').startsWith('https:');
  const now = () => deps.clock.now().toISOString();
  const browserLocale = (request: FastifyRequest) => translator(chooseLocale(undefined, request.headers['accept-language']));
  const privacy = (i18n: Translator) => i18n.t('hub.privacy');

  const notice = (reply: FastifyReply, status: number, i18n: Translator, title: MessageKey, body: MessageKey, extra: { from?: string; values?: Record<string, string | number | Date>; link?: { href: string; text: string } } = {}) =>
    sendPage(reply, status, <NoticePage i18n={i18n} title={i18n.t(title)} from={extra.from} paragraphs={[i18n.t(body, extra.values)]} privacy={privacy(i18n)} {...(extra.link ? { link: extra.link } : {})} />);

  const seeOther = (reply: FastifyReply, to: string) => {
    setPageHeaders(reply, { cacheable: false });
    return reply.redirect(to, 303);
  };

  const setSessionCookie = (reply: FastifyReply, value: string, maxAgeSeconds: number) =>
    reply.header('Set-Cookie', `${sessionCookieName}=${value}; Path=/me; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secureCookie ? '; Secure' : ''}`);

  const refuseIfSpent = async (limiter: RateLimiter, key: string, reply: FastifyReply, i18n: Translator) => {
    const decision = await limiter.consume(key);
    if (decision.allowed) return false;
    reply.header('Retry-After', decision.retryAfterSeconds);
    notice(reply, 429, i18n, 'rateLimited.title', 'rateLimited.body', { values: { seconds: decision.retryAfterSeconds } });
    return true;
  };

  /** The limiter's key of an address: its digest under the forms' key, so no address is kept in the limiter's store. */
  const emailKey = (email: string) => `email:${createHmac('sha256', formKey).update(email.toLowerCase()).digest('base64url')}`;
  const signInFormName = (workspaceId: string) => `sign-in\u0000${workspaceId}`;
  const linkFormSubject = (token: string) => `person-link\u0000${access.digestOf(token)?.toString('base64url') ?? ''}`;

  // Sign-in.

  const workspaceOf = async (request: FastifyRequest<{ Params: { workspaceId: string } }>) => {
    const { workspaceId } = request.params;
    if (!WORKSPACE_ID.test(workspaceId)) return undefined;
    const name = await access.findWorkspaceName(deps.db, workspaceId);
    return name === undefined ? undefined : { workspaceId, name };
  };

  const signInPage = (reply: FastifyReply, status: number, i18n: Translator, workspace: { workspaceId: string; name: string }, extra: { email?: string; error?: string } = {}) =>
    sendPage(reply, status, <SignInPage i18n={i18n} from={workspace.name} action={`/me/${workspace.workspaceId}`} formToken={formToken(formKey, 'person-sign-in', signInFormName(workspace.workspaceId))} {...extra} />);

  app.get<{ Params: { workspaceId: string } }>('/me/:workspaceId', async (request, reply) => {
    const i18n = browserLocale(request);
    if (await refuseIfSpent(perAddress, `address:${request.ip}`, reply, i18n)) return reply;
    const workspace = await workspaceOf(request);
    if (!workspace) return notice(reply, 404, i18n, 'link.unknown.title', 'link.unknown.body');
    return signInPage(reply, 200, i18n, workspace);
  });

  app.post<{ Params: { workspaceId: string }; Body: Posted }>('/me/:workspaceId', { config: { acceptsForm: true } }, async (request, reply) => {
    const i18n = browserLocale(request);
    const posted: Posted = request.body && typeof request.body === 'object' ? request.body : {};
    if (isCrossSitePost(request, deps.config.publicUrl)) return notice(reply, 403, i18n, 'form.expired.title', 'form.expired.body');
    if (await refuseIfSpent(perAddress, `address:${request.ip}`, reply, i18n)) return reply;
    const workspace = await workspaceOf(request);
    if (!workspace) return notice(reply, 404, i18n, 'link.unknown.title', 'link.unknown.body');
    if (!formTokenIsValid(formKey, 'person-sign-in', signInFormName(workspace.workspaceId), posted.formToken?.[0])) return notice(reply, 403, i18n, 'form.expired.title', 'form.expired.body', { from: workspace.name });
    const email = (posted.email?.[0] ?? '').trim();
    if (email.length > 320 || !EMAIL.test(email) || email.includes('\u0000')) return signInPage(reply, 400, i18n, workspace, { email: email.slice(0, 320), error: i18n.t('hub.signIn.errors.email') });
    if (await refuseIfSpent(perEmail, emailKey(email), reply, i18n)) return reply;
    // The same work and the same page whether or not the address is known: a job is queued either way.
    attributeWrite(request, { workspaceId: workspace.workspaceId, actor: { kind: 'PARTICIPANT' } });
    await access.requestSignIn(deps.tenantDb(workspace.workspaceId), deps.clock, { workspaceId: workspace.workspaceId, email, locale: i18n.locale });
    return notice(reply, 200, i18n, 'hub.signIn.sent.title', 'hub.signIn.sent.body', { from: workspace.name, values: { workspace: workspace.name, minutes: access.linkLifetimeMinutes } });
  });

  // The link: GET shows Continue, POST spends it.

  const linkRefused = async (reply: FastifyReply, i18n: Translator, state: Exclude<access.LinkState, { kind: 'VALID' }>, token: string) => {
    if (state.kind === 'UNKNOWN') return notice(reply, 404, i18n, 'link.unknown.title', 'link.unknown.body');
    const again = await againLink(token, i18n);
    if (state.kind === 'USED') return notice(reply, 410, i18n, 'hub.link.used.title', 'hub.link.used.body', again);
    return notice(reply, 410, i18n, 'link.expired.title', 'hub.link.expired.body', { ...again, values: { minutes: access.linkLifetimeMinutes } });
  };

  /** For a used or expired link: the way to its workspace's sign-in page. */
  const againLink = async (token: string, i18n: Translator) => {
    const workspaceId = await access.workspaceOfLink(deps.db, token);
    return workspaceId ? { link: { href: `/me/${workspaceId}`, text: i18n.t('hub.link.again') } } : {};
  };

  app.get<{ Params: { token: string } }>('/me/link/:token', async (request, reply) => {
    const i18n = browserLocale(request);
    if (await refuseIfSpent(perAddress, `address:${request.ip}`, reply, i18n)) return reply;
    const { token } = request.params;
    const state = await access.inspectLink(deps.db, token, now());
    if (state.kind !== 'VALID') return linkRefused(reply, i18n, state, token);
    const from = (await access.findWorkspaceName(deps.db, state.workspaceId)) ?? '';
    return sendPage(reply, 200, <ContinuePage i18n={i18n} from={from} action={`/me/link/${token}`} formToken={formToken(formKey, linkFormSubject(token), 'continue')} />);
  });

  app.post<{ Params: { token: string }; Body: Posted }>('/me/link/:token', { config: { acceptsForm: true } }, async (request, reply) => {
    const i18n = browserLocale(request);
    const posted: Posted = request.body && typeof request.body === 'object' ? request.body : {};
    if (isCrossSitePost(request, deps.config.publicUrl)) return notice(reply, 403, i18n, 'form.expired.title', 'form.expired.body');
    if (await refuseIfSpent(perAddress, `address:${request.ip}`, reply, i18n)) return reply;
    const { token } = request.params;
    if (!formTokenIsValid(formKey, linkFormSubject(token), 'continue', posted.formToken?.[0])) return notice(reply, 403, i18n, 'form.expired.title', 'form.expired.body');
    const started = await access.spendLinkForSession(deps.db, token, now());
    if (started.kind !== 'STARTED') return linkRefused(reply, i18n, started, token);
    attributeWrite(request, { workspaceId: started.workspaceId, actor: { kind: 'PARTICIPANT', personId: started.personId }, resourceType: 'person', resourceId: started.personId });
    setSessionCookie(reply, started.sessionToken, access.sessionLifetimeHours * 3600);
    return seeOther(reply, '/me');
  });

  // The session's pages.

  interface Signed {
    session: access.PersonSession;
    db: Kysely<DB>;
    i18n: Translator;
    from: string;
  }

  /** The request's live session, or the page that says it ended (already sent). */
  const signedIn = async (request: FastifyRequest, reply: FastifyReply): Promise<Signed | undefined> => {
    const i18n = browserLocale(request);
    if (await refuseIfSpent(perAddress, `address:${request.ip}`, reply, i18n)) return undefined;
    const session = await access.resumeSession(deps.db, cookieOf(request, sessionCookieName), now());
    if (!session) {
      if (cookieOf(request, sessionCookieName) !== undefined) setSessionCookie(reply, '', 0);
      notice(reply, 401, i18n, 'hub.session.ended.title', 'hub.session.ended.body');
      return undefined;
    }
    const from = (await access.findWorkspaceName(deps.db, session.workspaceId)) ?? '';
    attributeWrite(request, { workspaceId: session.workspaceId, actor: { kind: 'PARTICIPANT', personId: session.personId }, resourceType: 'person', resourceId: session.personId });
    return { session, db: deps.tenantDb(session.workspaceId), i18n, from };
  };

  const formsOf = (session: access.PersonSession) => {
    const subject = `person-session\u0000${session.sessionId}`;
    const names = ['signOut', 'details', 'stop', 'stopAll', 'withdraw', 'erase', 'manage'] as const;
    return Object.fromEntries(names.map((name) => [name, formToken(formKey, subject, name)])) as Record<(typeof names)[number], string>;
  };

  /** A session's post: from this site, with the form token of this session and form; else the page that says so (already sent). */
  const signedPost = async (request: FastifyRequest<{ Body: Posted }>, reply: FastifyReply, form: keyof ReturnType<typeof formsOf>): Promise<(Signed & { posted: Posted }) | undefined> => {
    const posted: Posted = request.body && typeof request.body === 'object' ? request.body : {};
    if (isCrossSitePost(request, deps.config.publicUrl)) {
      notice(reply, 403, browserLocale(request), 'form.expired.title', 'form.expired.body');
      return undefined;
    }
    const signed = await signedIn(request, reply);
    if (!signed) return undefined;
    if (!formTokenIsValid(formKey, `person-session\u0000${signed.session.sessionId}`, form, posted.formToken?.[0])) {
      notice(reply, 403, signed.i18n, 'form.expired.title', 'form.expired.body', { from: signed.from });
      return undefined;
    }
    return { ...signed, posted };
  };

  const personContext = (signed: Signed) => ({ db: signed.db, clock: deps.clock, workspaceId: signed.session.workspaceId, canReadPersonalData: true });
  const notFoundPage = (reply: FastifyReply, signed: Signed) => notice(reply, 404, signed.i18n, 'link.unknown.title', 'link.unknown.body', { from: signed.from });

  const hubPage = async (reply: FastifyReply, signed: Signed, status: number, extra: { done?: HubDone; profile?: ProfileField[] } = {}) => {
    const { db, session, i18n } = signed;
    const { workspaceId, personId } = session;
    const [person, participations, consents, editable, bookings] = await Promise.all([
      getPerson(personContext(signed), personId),
      participationsOfPerson(db, workspaceId, personId),
      consentsOfPerson(db, workspaceId, personId),
      editableByPerson(db, workspaceId),
      liveBookingsOfPerson(db, workspaceId, personId),
    ]);
    const studyName = (studyId: string | null) => participations.find((row) => row.study_id === studyId)?.study_name ?? null;
    const studies: StudyView[] = participations.map((row) => ({ participantId: row.participant_id, studyName: row.study_name ?? '', state: stateOf(row), messagesStopped: row.messages_stopped_at !== null }));
    // Bookings, each with its calendar file and its page (move, cancel); and times the team recorded without a booking.
    const booked = new Set(bookings.map((booking) => booking.participant_id));
    const sessions: SessionView[] = [
      ...bookings.map((booking) => ({
        studyName: booking.study_name,
        startsAt: new Date(booking.starts_at).toISOString(),
        timeZone: booking.shown_time_zone,
        booking: {
          calendarHref: `/me/sessions/${booking.booking_id}/calendar.ics`,
          manageAction: `/me/sessions/${booking.booking_id}/manage`,
          manageLabel: i18n.t('hub.sessions.manage', { study: booking.study_name }),
        },
      })),
      ...participations
        .filter((row) => row.status === 'SCHEDULED' && row.interview_start_time !== null && !booked.has(row.participant_id))
        .map((row) => ({ studyName: row.study_name ?? '', startsAt: new Date(row.interview_start_time!).toISOString(), timeZone: 'UTC' })),
    ].sort((a, b) => a.startsAt.localeCompare(b.startsAt));
    const profile = extra.profile ?? editable.map((property) => ({ property, shown: shownOf(property, person.properties[property.propertyId] as PropertyValue | undefined) }));
    return sendPage(
      reply,
      status,
      <HubPage
        i18n={i18n}
        from={signed.from}
        done={extra.done}
        studies={studies}
        sessions={sessions}
        consents={consents.map((consent) => ({
          consentId: consent.consent_submission_id,
          studyName: consent.study_id === null ? null : (studyName(consent.study_id) ?? ''),
          givenAt: consent.submitted_at,
          withdrawnAt: consent.withdrawn_at,
          hasCopy: consent.source === 'PARTICIPANT_PAGE' && consent.signed_name !== null,
          canWithdraw: consent.study_id !== null && studyName(consent.study_id) !== null,
        }))}
        profile={profile}
        optedOut={person.isOptedOut}
        tokens={formsOf(session)}
      />,
    );
  };

  const doneOf = (query: unknown): HubDone | undefined => {
    const done = (query as { done?: unknown } | undefined)?.done;
    return typeof done === 'string' && ['saved', 'withdrawn', 'stopped', 'optedOut'].includes(done) ? (done as HubDone) : undefined;
  };

  app.get('/me', async (request, reply) => {
    const signed = await signedIn(request, reply);
    if (!signed) return reply;
    const done = doneOf(request.query);
    return hubPage(reply, signed, 200, done ? { done } : {});
  });

  app.post<{ Body: Posted }>('/me/sign-out', { config: { acceptsForm: true } }, async (request, reply) => {
    const signed = await signedPost(request, reply, 'signOut');
    if (!signed) return reply;
    await access.endSession(deps.db, cookieOf(request, sessionCookieName), now());
    setSessionCookie(reply, '', 0);
    return notice(reply, 200, signed.i18n, 'hub.session.ended.title', 'hub.signedOut.body', { from: signed.from, link: { href: `/me/${signed.session.workspaceId}`, text: signed.i18n.t('hub.link.again') } });
  });

  /** One of the person's own live bookings, or undefined (another person's, another workspace's, canceled, or no such id). */
  const ownBooking = async (signed: Signed, bookingId: string) =>
    ID.test(bookingId) ? (await liveBookingsOfPerson(signed.db, signed.session.workspaceId, signed.session.personId)).find((booking) => booking.booking_id === bookingId) : undefined;

  app.get<{ Params: { bookingId: string } }>('/me/sessions/:bookingId/calendar.ics', async (request, reply) => {
    const signed = await signedIn(request, reply);
    if (!signed) return reply;
    const booking = await ownBooking(signed, request.params.bookingId);
    if (!booking) return notFoundPage(reply, signed);
    setPageHeaders(reply, { cacheable: false });
    reply.header('Content-Disposition', 'attachment; filename="session.ics"');
    return reply.type('text/calendar; charset=utf-8').send(
      bookingCalendarFile({
        bookingId: booking.booking_id,
        sequence: booking.sequence,
        publicUrl: deps.config.publicUrl ?? `${request.protocol}://${request.host}`,
        startsAt: booking.starts_at,
        endsAt: booking.ends_at,
        summary: signed.i18n.t('calendar.summary', { study: booking.study_name }),
        canceled: false,
        stamp: new Date(booking.updated_at),
      }),
    );
  });

  // The session's own page (move, cancel) is its SCHEDULING link's: a fresh one, made for this visit, opens it.
  app.post<{ Params: { bookingId: string }; Body: Posted }>('/me/sessions/:bookingId/manage', { config: { acceptsForm: true } }, async (request, reply) => {
    const signed = await signedPost(request, reply, 'manage');
    if (!signed) return reply;
    const booking = await ownBooking(signed, request.params.bookingId);
    if (!booking) return notFoundPage(reply, signed);
    const link = await issueLink(signed.db, {
      workspaceId: signed.session.workspaceId,
      participantId: booking.participant_id,
      studyId: booking.study_id,
      personId: booking.person_id,
      purpose: 'SCHEDULING',
      publicUrl: deps.config.publicUrl ?? `${request.protocol}://${request.host}`,
      at: now(),
    });
    return seeOther(reply, new URL(link.url).pathname);
  });

  app.get<{ Params: { consentId: string } }>('/me/consents/:consentId/copy.pdf', async (request, reply) => {
    const signed = await signedIn(request, reply);
    if (!signed) return reply;
    const { consentId } = request.params;
    const copy = ID.test(consentId) ? await signedCopyForPerson(signed.db, signed.session.workspaceId, signed.session.personId, consentId) : undefined;
    if (!copy) return notFoundPage(reply, signed);
    setPageHeaders(reply, { cacheable: false });
    return reply.type('application/pdf').header('Content-Disposition', `attachment; filename="${copy.filename}"`).send(copy.pdf);
  });

  app.post<{ Params: { consentId: string }; Body: Posted }>('/me/consents/:consentId/withdraw', { config: { acceptsForm: true } }, async (request, reply) => {
    const signed = await signedPost(request, reply, 'withdraw');
    if (!signed) return reply;
    const { consentId } = request.params;
    const outcome = ID.test(consentId) ? await withdrawForPerson(signed.db, signed.session.workspaceId, signed.session.personId, consentId, now()) : { kind: 'GONE' as const };
    if (outcome.kind === 'GONE') return notFoundPage(reply, signed);
    return seeOther(reply, '/me?done=withdrawn');
  });

  app.post<{ Params: { participantId: string }; Body: Posted }>('/me/studies/:participantId/stop-messages', { config: { acceptsForm: true } }, async (request, reply) => {
    const signed = await signedPost(request, reply, 'stop');
    if (!signed) return reply;
    const { participantId } = request.params;
    const outcome = ID.test(participantId) ? await stopStudyMessages(signed.db, signed.session.workspaceId, signed.session.personId, participantId, now()) : 'NOT_FOUND';
    if (outcome === 'NOT_FOUND') return notFoundPage(reply, signed);
    return seeOther(reply, '/me?done=stopped');
  });

  app.post<{ Body: Posted }>('/me/messages/stop', { config: { acceptsForm: true } }, async (request, reply) => {
    const signed = await signedPost(request, reply, 'stopAll');
    if (!signed) return reply;
    // The opt-out of the API and of the unsubscribe link: contact status OPTED_OUT, the `person.opted_out` event.
    await setOptedOut({ ...personContext(signed) }, signed.session.personId, true);
    return seeOther(reply, '/me?done=optedOut');
  });

  app.post<{ Body: Posted }>('/me/details', { config: { acceptsForm: true } }, async (request, reply) => {
    const signed = await signedPost(request, reply, 'details');
    if (!signed) return reply;
    const { db, session, i18n, posted } = signed;
    const [editable, person] = await Promise.all([editableByPerson(db, session.workspaceId), getPerson(personContext(signed), session.personId)]);
    const changes: Record<string, PropertyValue | null> = {};
    const profile: ProfileField[] = [];
    for (const property of editable) {
      const name = `p_${property.propertyId}`;
      const held = person.properties[property.propertyId] as PropertyValue | undefined;
      // A field not on the posted form (a property made editable since the page was served) is left as it is.
      if (!(name in posted)) {
        profile.push({ property, shown: shownOf(property, held) });
        continue;
      }
      const given = posted[name]!;
      const result = valueOf(property, given, i18n);
      if ('error' in result) {
        profile.push({ property, shown: given.filter((value) => value !== '').map((value) => value.slice(0, TEXT_MAX)), error: result.error });
        continue;
      }
      profile.push({ property, shown: result.value === null ? [] : shownOf(property, result.value) });
      if (JSON.stringify(result.value ?? null) !== JSON.stringify(held ?? null)) changes[property.propertyId] = result.value;
    }
    if (profile.some((field) => field.error)) return hubPage(reply, signed, 400, { profile });
    if (Object.keys(changes).length > 0) {
      try {
        // The team's own path (PATCH /people/{personId}): the same checks, unique claims and `person.updated` event, by the person.
        await updatePerson(personContext(signed), session.personId, { properties: changes } as Parameters<typeof updatePerson>[2], 'PERSON');
      } catch (error) {
        if (!(error instanceof ApiError) || error.status >= 500) throw error;
        const propertyIds = new Set(error.items.map((item) => item.path?.[1]).filter((id): id is string => typeof id === 'string'));
        const refused = profile.map((field) =>
          propertyIds.has(field.property.propertyId) || (propertyIds.size === 0 && field.property.propertyId in changes) ? { ...field, error: i18n.t('hub.profile.errors.taken') } : field,
        );
        return hubPage(reply, signed, 400, { profile: refused });
      }
    }
    return seeOther(reply, '/me?done=saved');
  });

  app.get('/me/data.json', async (request, reply) => {
    const signed = await signedIn(request, reply);
    if (!signed) return reply;
    const { db, session } = signed;
    const { workspaceId, personId } = session;
    const [person, participations, consents, messages, events, names] = await Promise.all([
      getPerson(personContext(signed), personId),
      participationsOfPerson(db, workspaceId, personId),
      consentsOfPerson(db, workspaceId, personId),
      messagesOfPerson(db, workspaceId, personId),
      statusEventsOfPerson(db, workspaceId, personId),
      propertyNames(db, workspaceId),
    ]);
    const answers = await answersOfParticipants(db, workspaceId, participations.map((row) => row.participant_id));
    const nameOf = new Map(names.map((row) => [row.property_id, row.name]));
    const { properties, ...fields } = person;
    const document = {
      exportedAt: now(),
      workspace: { workspaceId, name: signed.from },
      person: fields,
      properties: Object.entries(properties).map(([propertyId, value]) => ({ propertyId, name: nameOf.get(propertyId) ?? null, value })),
      participations: participations.map((row) => ({
        participantId: row.participant_id,
        studyId: row.study_id,
        study: row.study_name,
        status: row.status,
        screenerState: row.screener_state,
        invitedAt: row.invited_at,
        screenerSubmittedAt: row.screener_submitted_at,
        interviewStartTime: row.interview_start_time,
        completedAt: row.completed_at,
        consentSubmittedAt: row.consent_submitted_at,
        messagesStoppedAt: row.messages_stopped_at,
        addedAt: row.added_at,
      })),
      screenerAnswers: answers,
      consents: consents.map((row) => ({
        consentSubmissionId: row.consent_submission_id,
        studyId: row.study_id,
        signupFormId: row.signup_form_id,
        consentFormId: row.consent_form_id,
        formVersion: row.form_version,
        textSha256: row.text_sha256,
        source: row.source,
        signedName: row.signed_name,
        choices: row.choices,
        submittedAt: row.submitted_at,
        withdrawnAt: row.withdrawn_at,
      })),
      messages: messages.map((row) => ({ messageId: row.message_id, studyId: row.study_id, status: row.status, queuedAt: row.queued_at, sentAt: row.sent_at, to: row.recipient_email, subject: row.subject, text: row.text_body })),
      events: events.map((row) => ({ studyId: row.study_id, participantId: row.participant_id, field: row.field, from: row.from_value, to: row.to_value, at: row.occurred_at })),
    };
    setPageHeaders(reply, { cacheable: false });
    return reply
      .type('application/json; charset=utf-8')
      .header('Content-Disposition', 'attachment; filename="my-data.json"')
      .send(JSON.stringify(document, null, 2));
  });

  app.get('/me/erase', async (request, reply) => {
    const signed = await signedIn(request, reply);
    if (!signed) return reply;
    return sendPage(reply, 200, <EraseConfirmPage i18n={signed.i18n} from={signed.from} formToken={formsOf(signed.session).erase} />);
  });

  app.post<{ Body: Posted }>('/me/erase', { config: { acceptsForm: true } }, async (request, reply) => {
    const signed = await signedPost(request, reply, 'erase');
    if (!signed) return reply;
    // The team's deletion (DELETE /people/{personId}): erased at once, every family's copy, the `person.deleted` event; the person's sessions and links go with it.
    await deletePerson(personContext(signed), signed.session.personId);
    setSessionCookie(reply, '', 0);
    return notice(reply, 200, signed.i18n, 'hub.erase.done.title', 'hub.erase.done.body', { from: signed.from, values: { workspace: signed.from } });
  });
}

import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { attributeWrite } from '../http/audit-actor.js';
import type { VNode } from 'preact';
import type { ServiceDeps } from '../context.js';
import type { RateLimiter } from '../http/rate-limit.js';
import * as links from '../families/participant-links/service.js';
import type { LinkPageFacts } from '../families/participant-links/service.js';
import { recordScreenerStarted, submitScreener } from '../families/screener-responses/service.js';
import type { AnswerError } from '../families/studies/screener-rules.js';
import { type AnswerableQuestion, findAnswerableScreener } from '../families/studies/service.js';
import { chooseLocale, type MessageKey, translator, type Translator } from './i18n.js';
import { documentOf, NoticePage } from './layout.js';
import { type PostedAnswers, type QuestionView, ScreenerPage } from './screener-page.js';
import { registerBookingPages } from './booking-routes.js';
import { registerConsentPages } from './consent-routes.js';
import { registerHubPages } from './hub/routes.js';
import { formToken, formTokenIsValid, isCrossSitePost, linkTokenAsSpelled, setPageHeaders } from './security.js';
import { participantStylesheet, participantStylesheetPath } from './styles.js';
import { brandingAssets, brandingForPage, brandOf, rememberBrand } from './branding.js';

/** The purpose the forms' anti-forgery key is derived for (HKDF from the service's secrets key). */
export const participantFormKeyPurpose = 'recruit-ops participant forms v1';

export interface ParticipantPagesOptions {
  deps: ServiceDeps;
  /** The key of the forms' anti-forgery tokens (derived from the service's secrets key). */
  formKey: Buffer;
}

/** The question types of the studies family, as the page shows them. */
const kindOfType: Record<string, QuestionView['kind']> = {
  SHORT_FORM: 'text',
  LONG_FORM: 'longText',
  NUMBER: 'number',
  SCALE: 'number',
  DATE: 'date',
  EMAIL: 'email',
  PHONE_NUMBER: 'phone',
  SINGLE_SELECT: 'single',
  YES_NO: 'single',
  MULTI_SELECT: 'multi',
};

const viewOf = (question: AnswerableQuestion): QuestionView => ({
  id: question.id,
  text: question.text,
  description: question.description,
  required: question.isRequired,
  kind: kindOfType[question.type] ?? 'text',
  choices: (question.choices ?? []).map((choice) => ({ id: choice.id, label: choice.label })),
});

/** An answer's error in the page's language (the rules' `message` is the API's English). */
function errorText(i18n: Translator, error: AnswerError): string {
  switch (error.code) {
    case 'REQUIRED':
      return i18n.t('errors.required');
    case 'CHOOSE':
      return i18n.t('errors.chooseOne');
    case 'UNKNOWN_CHOICE':
    case 'UNKNOWN_QUESTION':
      return i18n.t('errors.unknownChoice');
    case 'NOT_A_NUMBER':
      return i18n.t('errors.notANumber');
    case 'NOT_WHOLE':
      return i18n.t('errors.notWhole');
    case 'BELOW_MINIMUM':
      return i18n.t('errors.belowMinimum', { limit: error.limit ?? 0 });
    case 'ABOVE_MAXIMUM':
      return i18n.t('errors.aboveMaximum', { limit: error.limit ?? 0 });
    case 'NOT_A_DATE':
      return i18n.t('errors.notADate');
    case 'TOO_LONG':
      return i18n.t('errors.tooLong', { max: error.limit ?? 0 });
    case 'NOT_AN_EMAIL':
      return i18n.t('errors.notAnEmail');
    case 'NOT_A_PHONE':
      return i18n.t('errors.notAPhone');
    case 'NOT_A_TEXT':
      return i18n.t('errors.required');
  }
}

/** The most a form post may carry: the longest answers of a long screener, with room. */
const FORM_BODY_LIMIT = 256 * 1024;

function sendPage(reply: FastifyReply, status: number, page: VNode): FastifyReply {
  setPageHeaders(reply, { cacheable: false });
  return reply.code(status).type('text/html; charset=utf-8').send(documentOf(page, brandOf(reply)));
}

function notice(reply: FastifyReply, status: number, i18n: Translator, title: MessageKey, body: MessageKey, options: { from?: string; values?: Record<string, string | number | Date> } = {}) {
  return sendPage(reply, status, <NoticePage i18n={i18n} title={i18n.t(title)} from={options.from} paragraphs={[i18n.t(body, options.values)]} />);
}

/**
 * The participant's pages: the face of the service that the people being recruited see, apart
 * from the API and the console. Server-rendered HTML with no script, in the study's language,
 * reached through a link whose token names one participant and one purpose. Every page is
 * public (no API token): the link is the credential, rate-limited per address and per link.
 * The pages call the families' services; they write no SQL of their own.
 */
export const participantPages: FastifyPluginAsync<ParticipantPagesOptions> = async (app: FastifyInstance, { deps, formKey }) => {
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, public: true };
    route.schema = { ...route.schema, hide: true };
  });
  const perAddress: RateLimiter = deps.limiter.withBudget({ name: 'participant-address', max: deps.config.participantRateLimitMax });
  const perLink: RateLimiter = deps.limiter.withBudget({ name: 'participant-link', max: deps.config.participantLinkRateLimitMax });

  const refuseIfSpent = async (limiter: RateLimiter, key: string, reply: FastifyReply, i18n: Translator) => {
    const decision = await limiter.consume(key);
    if (decision.allowed) return undefined;
    reply.header('Retry-After', decision.retryAfterSeconds);
    return notice(reply, 429, i18n, 'rateLimited.title', 'rateLimited.body', { values: { seconds: decision.retryAfterSeconds } });
  };

  app.get(participantStylesheetPath, async (_request, reply) => {
    setPageHeaders(reply, { cacheable: true });
    return reply.type('text/css; charset=utf-8').send(participantStylesheet);
  });
  await app.register(brandingAssets, { deps });

  /** The link, its participant's facts and the page's language; or the page that says why not (already sent). */
  const open = async (request: FastifyRequest<{ Params: { token: string } }>, reply: FastifyReply) => {
    const browserLocale = translator(chooseLocale(undefined, request.headers['accept-language']));
    if (await refuseIfSpent(perAddress, `address:${request.ip}`, reply, browserLocale)) return undefined;
    // A link is accepted in the one spelling the service wrote: a percent-encoded one is another spelling.
    const token = linkTokenAsSpelled(request.raw.url, request.params.token) ?? '';
    const resolved = await links.resolveLink(deps.anyScopeDb, token, deps.clock.now().toISOString());
    if ('refused' in resolved) {
      if (resolved.refused === 'expired') notice(reply, 410, browserLocale, 'link.expired.title', 'link.expired.body');
      else notice(reply, 404, browserLocale, 'link.unknown.title', 'link.unknown.body');
      return undefined;
    }
    const { link } = resolved;
    if (await refuseIfSpent(perLink, `link:${link.linkId}`, reply, browserLocale)) return undefined;
    const db = deps.tenantDb(link.workspaceId);
    const facts = await links.openLinkPage(db, link.workspaceId, link, deps.clock.now().toISOString());
    if (!facts) {
      notice(reply, 404, browserLocale, 'link.unknown.title', 'link.unknown.body');
      return undefined;
    }
    // A write on this page is the person's, on their participation (the audit trail).
    attributeWrite(request, { workspaceId: link.workspaceId, actor: { kind: 'PARTICIPANT', personId: link.personId }, resourceType: 'participant', resourceId: link.participantId });
    const i18n = translator(chooseLocale(facts.studyPlan.language, request.headers['accept-language']));
    // The study's branding: its display name stands for the workspace's on every page of the link.
    const brand = await brandingForPage(db, link.workspaceId, facts.studyPlan.brandingConfigId);
    rememberBrand(reply, brand);
    return { link, facts: brand ? { ...facts, workspaceName: brand.displayName } : facts, i18n, db };
  };

  // Booking (booking-routes.tsx): a SCHEDULING link's page, and a qualified SCREENER link's booking step.
  const bookingPages = registerBookingPages(app, { deps, formKey, open, sendPage, notice });
  // Consent and withdrawal (consent-routes.tsx): the consent step, a CONSENT or WITHDRAWAL link's page; a signature goes on to booking when the study offers it.
  const consentPages = registerConsentPages(app, { deps, formKey, open, sendPage, notice, afterConsent: (opened, base) => bookingPages.afterScreener(opened, base) });
  // A page of the person's own (hub/routes.tsx): sign-in by an emailed link, then their studies, consents, details and data, under /me.
  registerHubPages(app, { deps, formKey, sendPage });
  const seeOther = (reply: FastifyReply, to: string) => {
    setPageHeaders(reply, { cacheable: false });
    return reply.redirect(to, 303);
  };

  const studyNameOf = (facts: LinkPageFacts) => facts.studyPlan.externalName ?? facts.studyPlan.name ?? '';

  /** The notice that stands instead of the screener, or undefined when the person may answer it. */
  const screenerUnavailable = (reply: FastifyReply, facts: LinkPageFacts, i18n: Translator) => {
    const from = facts.workspaceName;
    const study = facts.studyPlan.externalName ?? facts.studyPlan.name ?? '';
    if (facts.personOptedOut) return notice(reply, 200, i18n, 'person.optedOut.title', 'person.optedOut.body', { from });
    if (facts.studyStatus === 'CLOSED') return notice(reply, 200, i18n, 'study.closed.title', 'study.closed.body', { from, values: { study } });
    if (facts.studyStatus !== 'ACTIVE') return notice(reply, 200, i18n, 'study.paused.title', 'study.paused.body', { from, values: { study } });
    if (facts.screenerSubmittedAt !== null || ['SUBMITTED', 'QUALIFIED', 'DISQUALIFIED'].includes(facts.screenerState)) {
      return notice(reply, 200, i18n, 'screener.answered.title', 'screener.answered.body', { from, values: { study, date: new Date(facts.screenerSubmittedAt ?? Date.now()) } });
    }
    return undefined;
  };

  const showScreener = (
    reply: FastifyReply,
    status: number,
    opened: { link: links.ResolvedLink; facts: LinkPageFacts; i18n: Translator },
    path: string,
    questions: AnswerableQuestion[],
    options: { answers?: PostedAnswers; errors?: AnswerError[]; startedAt?: string } = {},
  ) => {
    const { link, facts, i18n } = opened;
    const startedAt = options.startedAt ?? String(deps.clock.now().getTime());
    const errors = new Map((options.errors ?? []).map((error) => [error.questionId, errorText(i18n, error)]));
    return sendPage(
      reply,
      status,
      <ScreenerPage
        i18n={i18n}
        from={facts.workspaceName}
        study={studyNameOf(facts)}
        description={facts.studyPlan.externalDescription}
        questions={questions.map(viewOf)}
        action={path}
        formToken={formToken(formKey, link.linkId, `screener\u0000${startedAt}`)}
        startedAt={startedAt}
        {...(options.answers ? { answers: options.answers } : {})}
        errors={errors}
      />,
    );
  };

  app.get<{ Params: { token: string } }>('/p/:token', async (request, reply) => {
    const opened = await open(request, reply);
    if (!opened) return reply;
    const { link, facts, i18n, db } = opened;
    const path = request.url.split('?')[0]!;
    if (link.purpose === 'SCHEDULING') return bookingPages.pageOfLink(request, reply, opened, path);
    if (link.purpose !== 'SCREENER') return consentPages.pageOfLink(reply, opened, path);
    // The consent step, when the study asks for it before the questions, or after an answer that did not disqualify.
    const consentFirst = await consentPages.beforeScreener(opened, path);
    if (consentFirst) return seeOther(reply, consentFirst);
    if (['SUBMITTED', 'QUALIFIED'].includes(facts.screenerState)) {
      const consentNext = await consentPages.afterScreener(opened, path);
      if (consentNext) return seeOther(reply, consentNext);
      // Qualified, and the study lets the qualified book: the booking step (which shows the session once booked).
      const bookingNext = facts.screenerState === 'QUALIFIED' ? await bookingPages.afterScreener(opened, path) : undefined;
      if (bookingNext) return seeOther(reply, bookingNext);
    }
    if (screenerUnavailable(reply, facts, i18n)) return reply;
    const screener = await findAnswerableScreener(db, link.workspaceId, link.studyId);
    const consentOnly = !screener || screener.questions.length === 0 ? await consentPages.afterScreener(opened, path) : undefined;
    if (consentOnly) return seeOther(reply, consentOnly);
    if (!screener || screener.questions.length === 0) return notice(reply, 200, i18n, 'screener.none.title', 'screener.none.body', { from: facts.workspaceName, values: { study: studyNameOf(facts) } });
    return showScreener(reply, 200, opened, request.url.split('?')[0]!, screener.questions);
  });

  // Forms post URL-encoded text; nothing else is taken here.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (_request, body, done) => {
    const posted: PostedAnswers = {};
    for (const [name, value] of new URLSearchParams(body as string)) (posted[name] ??= []).push(value);
    done(null, posted);
  });

  app.post<{ Params: { token: string }; Body: PostedAnswers }>('/p/:token', { config: { acceptsForm: true } }, async (request, reply) => {
    const browserLocale = translator(chooseLocale(undefined, request.headers['accept-language']));
    const posted = request.body && typeof request.body === 'object' ? request.body : {};
    // Another site's form cannot post here: the browser says where the post comes from.
    if (isCrossSitePost(request, deps.config.publicUrl)) return notice(reply, 403, browserLocale, 'form.expired.title', 'form.expired.body');
    const opened = await open(request, reply);
    if (!opened) return reply;
    const { link, facts, i18n, db } = opened;
    // Only a screener link's page posts its answers here.
    if (link.purpose !== 'SCREENER') return notice(reply, 404, browserLocale, 'link.unknown.title', 'link.unknown.body');
    const startedAt = posted.startedAt?.[0] ?? '';
    if (!/^\d{1,15}$/.test(startedAt) || !formTokenIsValid(formKey, link.linkId, `screener\u0000${startedAt}`, posted.formToken?.[0])) {
      return notice(reply, 403, i18n, 'form.expired.title', 'form.expired.body', { from: facts.workspaceName });
    }
    if (screenerUnavailable(reply, facts, i18n)) return reply;
    const answers: Record<string, unknown> = {};
    for (const [name, values] of Object.entries(posted)) {
      if (!name.startsWith('q_')) continue;
      answers[name.slice(2)] = values.length > 1 ? values : values[0];
    }
    const at = deps.clock.now().toISOString();
    const result = await submitScreener(db, {
      workspaceId: link.workspaceId,
      studyId: link.studyId,
      participantId: link.participantId,
      linkId: link.linkId,
      answers,
      startedAt: new Date(Number(startedAt)).toISOString(),
      suspectedBot: (posted.website?.[0] ?? '') !== '',
      at,
    });
    const from = facts.workspaceName;
    const study = studyNameOf(facts);
    switch (result.kind) {
      case 'INVALID': {
        await recordScreenerStarted(db, link.workspaceId, link.studyId, link.participantId, at);
        // A multiple choice with one box ticked is one value; the page shows what was posted.
        return showScreener(reply, 400, opened, request.url.split('?')[0]!, result.questions, { answers: posted, errors: result.errors, startedAt });
      }
      case 'NO_SCREENER':
        return notice(reply, 200, i18n, 'screener.none.title', 'screener.none.body', { from, values: { study } });
      case 'ALREADY_SUBMITTED':
        return notice(reply, 200, i18n, 'screener.answered.title', 'screener.answered.body', { from, values: { study, date: new Date(at) } });
      case 'RECORDED': {
        // Over quota, the person learns only that the study is full: not which group, nor why.
        if (result.outcome === 'OVER_QUOTA') return notice(reply, 200, i18n, 'screener.full.title', 'screener.full.body', { from, values: { study } });
        // A qualifying answer (or one left for review) goes on to the consent form, when the study has one to sign.
        const consentNext = result.outcome === 'DISQUALIFIED' ? undefined : await consentPages.afterScreener(opened, request.url.split('?')[0]!);
        if (consentNext) return seeOther(reply, consentNext);
        const bookingNext = result.outcome === 'QUALIFIED' ? await bookingPages.afterScreener(opened, request.url.split('?')[0]!, { qualified: true }) : undefined;
        if (bookingNext) return seeOther(reply, bookingNext);
        // The reason for a disqualification is never shown: the person reads a kind, general word.
        return notice(reply, 200, i18n, 'screener.thanks.title', result.outcome === 'DISQUALIFIED' ? 'screener.notSelected.body' : 'screener.thanks.body', { from, values: { study } });
      }
    }
  });
};

import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import type { ServiceDeps } from '../context.js';
import type { RateLimiter } from '../http/rate-limit.js';
import * as links from '../families/participant-links/service.js';
import { tokenAsSpelled } from '../families/messages/unsubscribe.js';
import { findLinkPageFacts, findScreenerQuestions, type LinkPageFacts } from '../families/participant-links/queries.js';
import { chooseLocale, type MessageKey, translator, type Translator } from './i18n.js';
import { documentOf, NoticePage } from './layout.js';
import { type QuestionView, ScreenerPage } from './screener-page.js';
import { formToken, setPageHeaders } from './security.js';
import { participantStylesheet, participantStylesheetPath } from './styles.js';

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
  MULTI_SELECT: 'multi',
};

function sendPage(reply: FastifyReply, status: number, page: VNode): FastifyReply {
  setPageHeaders(reply, { cacheable: false });
  return reply.code(status).type('text/html; charset=utf-8').send(documentOf(page));
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

  /** The link, its participant's facts and the page's language; or the page that says why not (already sent). */
  const open = async (request: FastifyRequest<{ Params: { token: string } }>, reply: FastifyReply) => {
    const browserLocale = translator(chooseLocale(undefined, request.headers['accept-language']));
    if (await refuseIfSpent(perAddress, `address:${request.ip}`, reply, browserLocale)) return undefined;
    // A link is accepted in the one spelling the service wrote: a percent-encoded one is another spelling.
    const token = tokenAsSpelled(request.raw.url, request.params.token) ?? '';
    const resolved = await links.resolveLink(deps.db, token, deps.clock.now().toISOString());
    if ('refused' in resolved) {
      if (resolved.refused === 'expired') notice(reply, 410, browserLocale, 'link.expired.title', 'link.expired.body');
      else notice(reply, 404, browserLocale, 'link.unknown.title', 'link.unknown.body');
      return undefined;
    }
    const { link } = resolved;
    if (await refuseIfSpent(perLink, `link:${link.linkId}`, reply, browserLocale)) return undefined;
    const db = deps.tenantDb(link.workspaceId);
    const facts = await findLinkPageFacts(db, link.workspaceId, link.participantId);
    if (!facts) {
      notice(reply, 404, browserLocale, 'link.unknown.title', 'link.unknown.body');
      return undefined;
    }
    const i18n = translator(chooseLocale(facts.studyPlan.language, request.headers['accept-language']));
    await links.touchLink(db, link.workspaceId, link.linkId, deps.clock.now().toISOString());
    return { link, facts, i18n, db };
  };

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

  app.get<{ Params: { token: string } }>('/p/:token', async (request, reply) => {
    const opened = await open(request, reply);
    if (!opened) return reply;
    const { link, facts, i18n, db } = opened;
    if (screenerUnavailable(reply, facts, i18n)) return reply;
    const study = facts.studyPlan.externalName ?? facts.studyPlan.name ?? '';
    const questions = (await findScreenerQuestions(db, link.workspaceId, link.studyId)).map(
      (question): QuestionView => ({ id: question.question_id, text: question.name, description: question.description, required: question.is_required, kind: kindOfType[question.type] ?? 'text', choices: [] }),
    );
    if (questions.length === 0) return notice(reply, 200, i18n, 'screener.none.title', 'screener.none.body', { from: facts.workspaceName, values: { study } });
    return sendPage(
      reply,
      200,
      <ScreenerPage
        i18n={i18n}
        from={facts.workspaceName}
        study={study}
        description={facts.studyPlan.externalDescription}
        questions={questions}
        action={`/p/${request.params.token}`}
        formToken={formToken(formKey, link.linkId, 'screener')}
      />,
    );
  });
};

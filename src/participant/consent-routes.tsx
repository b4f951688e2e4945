import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { VNode } from 'preact';
import type { ServiceDeps } from '../context.js';
import type { DB } from '../db/schema.js';
import { type ConsentStanding, consentStanding, SIGNED_NAME_MAX, signOnPage, withdrawnAt, withdrawOnPage } from '../families/consent/page.js';
import type { ConsentFormVersion } from '../families/consent-forms/schemas.js';
import { findServableConsentForm } from '../families/consent-forms/service.js';
import type { LinkPageFacts } from '../families/participant-links/queries.js';
import type { ResolvedLink } from '../families/participant-links/service.js';
import { findAnswerableScreener } from '../families/studies/service.js';
import { ConsentPage, nameControlId, type PostedConsent, statementControlId } from './consent-page.js';
import { chooseLocale, type MessageKey, translator, type Translator } from './i18n.js';
import { formToken, formTokenIsValid, isCrossSitePost, setPageHeaders } from './security.js';
import { WithdrawalPage } from './withdrawal-page.js';

/** A link opened by the participant pages' `open`: the link, its participant's facts, the page's language, the workspace's handle. */
export interface OpenedLink {
  link: ResolvedLink;
  facts: LinkPageFacts;
  i18n: Translator;
  db: Kysely<DB>;
}

type NoticeOptions = { from?: string; values?: Record<string, string | number | Date> };

/** What routes.tsx lends these pages: its link opening (rate limits, token, language), and its page senders. */
export interface ConsentPagesOptions {
  deps: ServiceDeps;
  formKey: Buffer;
  open: (request: FastifyRequest<{ Params: { token: string } }>, reply: FastifyReply) => Promise<OpenedLink | undefined>;
  sendPage: (reply: FastifyReply, status: number, page: VNode) => FastifyReply;
  notice: (reply: FastifyReply, status: number, i18n: Translator, title: MessageKey, body: MessageKey, options?: NoticeOptions) => FastifyReply;
  /** Where a SCREENER link goes once its consent is signed (the booking step, when the study offers it to the qualified). */
  afterConsent?: (opened: OpenedLink, base: string) => Promise<string | undefined>;
}

/** The form posts as routes.tsx's parser gives them: each field's values. */
type Posted = Record<string, string[]>;

export interface ConsentPages {
  /** The page a CONSENT or WITHDRAWAL link opens at its own address (`/p/<token>`). */
  pageOfLink(reply: FastifyReply, opened: OpenedLink, path: string): Promise<FastifyReply>;
  /** Where a SCREENER link goes before its questions: the consent step, when the study asks for it first and it is still to sign. */
  beforeScreener(opened: OpenedLink, path: string): Promise<string | undefined>;
  /** Where a SCREENER link goes once its screener is answered (not disqualified), or when the study has no questions: the consent step when there is one to sign. */
  afterScreener(opened: OpenedLink, path: string): Promise<string | undefined>;
}

const studyNameOf = (facts: LinkPageFacts) => facts.studyPlan.externalName ?? facts.studyPlan.name ?? '';
const screenerAnswered = (facts: LinkPageFacts) => facts.screenerSubmittedAt !== null || ['SUBMITTED', 'QUALIFIED', 'DISQUALIFIED'].includes(facts.screenerState);

/** Control characters become spaces, runs of space one, in Unicode's composed form: the name as it is kept and printed. */
export function cleanSignedName(typed: string): string {
  return typed
    .normalize('NFC')
    .replace(/[\p{Cc}\p{Cf}\u2028\u2029]/gu, ' ')
    .replace(/\s+/gu, ' ')
    .trim();
}

/**
 * The participant's consent pages (issue 33, item 5): the consent step of a link
 * (`/p/<token>/consent`, and a CONSENT link's own address), and the withdrawal link's page with
 * its confirmation (`/p/<token>/withdraw`). Registered from routes.tsx inside the participant
 * pages' plugin, so they share its rate limits, headers, form parser and notices.
 */
export function registerConsentPages(app: FastifyInstance, options: ConsentPagesOptions): ConsentPages {
  const { deps, formKey, open, sendPage, notice } = options;
  const consentFormName = (version: number) => `consent\u0000${version}`;
  const withdrawFormName = 'withdraw';

  const redirect = (reply: FastifyReply, to: string) => {
    setPageHeaders(reply, { cacheable: false });
    return reply.redirect(to, 303);
  };

  const unknown = (reply: FastifyReply, i18n: Translator) => notice(reply, 404, i18n, 'link.unknown.title', 'link.unknown.body');

  /** The current version of the study's consent form, and where the person stands with it; undefined when the study presents none the page can show. */
  const consentStep = async (opened: OpenedLink): Promise<{ form: ConsentFormVersion; standing: ConsentStanding } | undefined> => {
    const { link, facts, db } = opened;
    const form = await findServableConsentForm(db, link.workspaceId, facts.studyPlan.consentFormId);
    if (!form) return undefined;
    return { form, standing: await consentStanding(db, link.workspaceId, link.studyId, facts.personId, form) };
  };

  const hasQuestions = async (opened: OpenedLink) => ((await findAnswerableScreener(opened.db, opened.link.workspaceId, opened.link.studyId))?.questions.length ?? 0) > 0;

  /**
   * The notice that stands instead of the consent form, or undefined when the person may sign
   * (also a redirect to the screener when a SCREENER link reaches the consent step first).
   */
  const consentUnavailable = async (reply: FastifyReply, opened: OpenedLink, step: Awaited<ReturnType<typeof consentStep>>, base: string) => {
    const { facts, i18n, link } = opened;
    const from = facts.workspaceName;
    const study = studyNameOf(facts);
    if (facts.personOptedOut) return notice(reply, 200, i18n, 'person.optedOut.title', 'person.optedOut.body', { from });
    if (facts.studyStatus === 'CLOSED') return notice(reply, 200, i18n, 'study.closed.title', 'study.closed.body', { from, values: { study } });
    if (facts.studyStatus !== 'ACTIVE') return notice(reply, 200, i18n, 'study.paused.title', 'study.paused.body', { from, values: { study } });
    if (!step) return notice(reply, 200, i18n, 'consent.none.title', 'consent.none.body', { from, values: { study } });
    if (step.standing.kind === 'SIGNED') return notice(reply, 200, i18n, 'consent.signed.title', 'consent.signed.body', { from, values: { study, date: new Date(step.standing.at) } });
    if (step.standing.kind === 'WITHDRAWN') return notice(reply, 200, i18n, 'consent.withdrawn.title', 'consent.withdrawn.body', { from, values: { study, date: new Date(step.standing.at) } });
    if (link.purpose === 'SCREENER') {
      // A screener link's consent follows a screener that did not disqualify, unless the study asks for consent first.
      if (facts.screenerState === 'DISQUALIFIED') return notice(reply, 200, i18n, 'screener.thanks.title', 'screener.notSelected.body', { from, values: { study } });
      if (!facts.studyPlan.consentBeforeScreener && !screenerAnswered(facts) && (await hasQuestions(opened))) return redirect(reply, base);
    }
    return undefined;
  };

  const showConsent = (reply: FastifyReply, status: number, opened: OpenedLink, form: ConsentFormVersion, action: string, extra: { posted?: PostedConsent; errors?: Map<string, string>; changed?: boolean } = {}) =>
    sendPage(
      reply,
      status,
      <ConsentPage
        i18n={opened.i18n}
        from={opened.facts.workspaceName}
        title={form.title}
        version={form.version}
        bodyHtml={form.bodyHtml}
        requiredStatements={form.requiredStatements}
        optionalChoices={form.optionalChoices}
        action={action}
        formToken={formToken(formKey, opened.link.linkId, consentFormName(form.version))}
        {...extra}
      />,
    );

  /** The consent step at `base` (the link's own address); the form posts to `<base>/consent`. */
  const consentStepPage = async (reply: FastifyReply, opened: OpenedLink, base: string) => {
    const step = await consentStep(opened);
    if (await consentUnavailable(reply, opened, step, base)) return reply;
    return showConsent(reply, 200, opened, step!.form, `${base}/consent`);
  };

  const withdrawalPage = async (reply: FastifyReply, opened: OpenedLink, base: string) => {
    const { link, facts, i18n, db } = opened;
    const from = facts.workspaceName;
    const study = studyNameOf(facts);
    const withdrawn = await withdrawnAt(db, link.workspaceId, link.studyId, facts.personId);
    if (withdrawn === undefined) return notice(reply, 200, i18n, 'withdraw.nothing.title', 'withdraw.nothing.body', { from, values: { study } });
    if (withdrawn !== null) return notice(reply, 200, i18n, 'withdraw.already.title', 'withdraw.already.body', { from, values: { study, date: new Date(withdrawn) } });
    return sendPage(reply, 200, <WithdrawalPage i18n={i18n} from={from} study={study} action={`${base}/withdraw`} formToken={formToken(formKey, link.linkId, withdrawFormName)} />);
  };

  /** `/p/<token>/<step>` → `/p/<token>`. */
  const baseOf = (request: FastifyRequest) => request.url.split('?')[0]!.split('/').slice(0, 3).join('/');

  app.get<{ Params: { token: string } }>('/p/:token/consent', async (request, reply) => {
    const opened = await open(request, reply);
    if (!opened) return reply;
    if (opened.link.purpose === 'WITHDRAWAL') return unknown(reply, opened.i18n);
    return consentStepPage(reply, opened, baseOf(request));
  });

  app.post<{ Params: { token: string }; Body: Posted }>('/p/:token/consent', { config: { acceptsForm: true } }, async (request, reply) => {
    const posted: Posted = request.body && typeof request.body === 'object' ? request.body : {};
    const base = baseOf(request);
    // Another site's form cannot post here: the browser says where the post comes from.
    if (isCrossSitePost(request, deps.config.publicUrl)) return forgedPost(request, reply);
    const opened = await open(request, reply);
    if (!opened) return reply;
    const { link, facts, i18n, db } = opened;
    if (link.purpose === 'WITHDRAWAL') return unknown(reply, i18n);
    const postedVersion = posted.version?.[0] ?? '';
    if (!/^\d{1,9}$/.test(postedVersion) || !formTokenIsValid(formKey, link.linkId, consentFormName(Number(postedVersion)), posted.formToken?.[0])) {
      return notice(reply, 403, i18n, 'form.expired.title', 'form.expired.body', { from: facts.workspaceName });
    }
    const step = await consentStep(opened);
    if (await consentUnavailable(reply, opened, step, base)) return reply;
    const { form } = step!;
    const action = `${base}/consent`;
    const statements = posted.statement ?? [];
    const chosen = posted.choice ?? [];
    const typedName = posted.signedName?.[0] ?? '';
    const sent: PostedConsent = { statements, choices: chosen, signedName: typedName.slice(0, 1000) };
    // The form changed while the person read it: they read the new version before signing it.
    if (Number(postedVersion) !== form.version) return showConsent(reply, 409, opened, form, action, { changed: true });

    const errors = new Map<string, string>();
    form.requiredStatements.forEach((statement, index) => {
      if (!statements.includes(statement.id)) errors.set(statementControlId(index), i18n.t('consent.errors.statement'));
    });
    const signedName = cleanSignedName(typedName);
    if (signedName === '') errors.set(nameControlId, i18n.t('consent.errors.nameRequired'));
    else if ([...signedName].length > SIGNED_NAME_MAX) errors.set(nameControlId, i18n.t('consent.errors.nameTooLong', { max: SIGNED_NAME_MAX }));
    if (errors.size > 0) return showConsent(reply, 400, opened, form, action, { posted: sent, errors });

    const choices = Object.fromEntries(form.optionalChoices.map((choice) => [choice.id, chosen.includes(choice.id)]));
    const at = deps.clock.now().toISOString();
    const outcome = await signOnPage(db, deps.clock, { workspaceId: link.workspaceId, studyId: link.studyId, participantId: link.participantId, linkId: link.linkId, form, signedName, choices, at });
    const from = facts.workspaceName;
    const study = studyNameOf(facts);
    switch (outcome.kind) {
      case 'GONE':
        return unknown(reply, i18n);
      case 'ALREADY_SIGNED':
        return notice(reply, 200, i18n, 'consent.signed.title', 'consent.signed.body', { from, values: { study, date: new Date(outcome.at) } });
      case 'WITHDRAWN':
        return notice(reply, 200, i18n, 'consent.withdrawn.title', 'consent.withdrawn.body', { from, values: { study, date: new Date(outcome.at) } });
      case 'SIGNED':
        // Consent first: the screener's questions come next.
        if (link.purpose === 'SCREENER' && facts.studyPlan.consentBeforeScreener && !screenerAnswered(facts) && (await hasQuestions(opened))) return redirect(reply, base);
        if (link.purpose === 'SCREENER' && options.afterConsent) {
          const next = await options.afterConsent(opened, base);
          if (next) return redirect(reply, next);
        }
        return notice(reply, 200, i18n, 'consent.thanks.title', 'consent.thanks.body', { from, values: { study } });
    }
  });

  app.post<{ Params: { token: string }; Body: Posted }>('/p/:token/withdraw', { config: { acceptsForm: true } }, async (request, reply) => {
    const posted: Posted = request.body && typeof request.body === 'object' ? request.body : {};
    if (isCrossSitePost(request, deps.config.publicUrl)) return forgedPost(request, reply);
    const opened = await open(request, reply);
    if (!opened) return reply;
    const { link, facts, i18n, db } = opened;
    if (link.purpose !== 'WITHDRAWAL') return unknown(reply, i18n);
    if (!formTokenIsValid(formKey, link.linkId, withdrawFormName, posted.formToken?.[0])) return notice(reply, 403, i18n, 'form.expired.title', 'form.expired.body', { from: facts.workspaceName });
    const outcome = await withdrawOnPage(db, { workspaceId: link.workspaceId, studyId: link.studyId, participantId: link.participantId, at: deps.clock.now().toISOString() });
    const from = facts.workspaceName;
    const study = studyNameOf(facts);
    switch (outcome.kind) {
      case 'GONE':
        return unknown(reply, i18n);
      case 'NOTHING_TO_WITHDRAW':
        return notice(reply, 200, i18n, 'withdraw.nothing.title', 'withdraw.nothing.body', { from, values: { study } });
      case 'ALREADY_WITHDRAWN':
        return notice(reply, 200, i18n, 'withdraw.already.title', 'withdraw.already.body', { from, values: { study, date: new Date(outcome.at) } });
      case 'WITHDRAWN':
        return notice(reply, 200, i18n, 'withdraw.done.title', 'withdraw.done.body', { from, values: { study } });
    }
  });

  /** A post from another site: the same page as the screener's (nothing about the link is looked up). */
  function forgedPost(request: FastifyRequest, reply: FastifyReply) {
    return notice(reply, 403, translator(chooseLocale(undefined, request.headers['accept-language'])), 'form.expired.title', 'form.expired.body');
  }

  return {
    async pageOfLink(reply, opened, path) {
      if (opened.link.purpose === 'WITHDRAWAL') return withdrawalPage(reply, opened, path);
      return consentStepPage(reply, opened, path);
    },
    async beforeScreener(opened, path) {
      if (!opened.facts.studyPlan.consentBeforeScreener) return undefined;
      const step = await consentStep(opened);
      return step?.standing.kind === 'TO_SIGN' ? `${path}/consent` : undefined;
    },
    async afterScreener(opened, path) {
      if (opened.facts.screenerState === 'DISQUALIFIED') return undefined;
      const step = await consentStep(opened);
      return step?.standing.kind === 'TO_SIGN' ? `${path}/consent` : undefined;
    },
  };
}

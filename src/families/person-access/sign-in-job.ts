import type { Kysely } from 'kysely';
import type { Clock } from '../../clock.js';
import type { DB } from '../../db/schema.js';
import type { JobHandler } from '../../jobs/queue.js';
import { chooseLocale, translator } from '../../participant/i18n.js';
import type { Mailer } from '../messages/mailer.js';
import { findLivePersonEmail } from '../people/service.js';
import { findWorkspaceName, issueSignInLink, linkLifetimeMinutes, SIGN_IN_QUEUE, withdrawSignInLink } from './service.js';

export interface SignInJobOptions {
  db: Kysely<DB>;
  clock: Clock;
  mailer: Mailer | undefined;
  publicUrl: string | undefined;
}

class TryAgain extends Error {}

/** The address of a sign-in link: `PUBLIC_URL/me/link/<token>`. */
export const signInLinkUrl = (publicUrl: string, token: string) => `${publicUrl.replace(/\/+$/, '')}/me/link/${token}`;

/**
 * Sends a sign-in link to the person's page. A request for an address that is no live person's
 * queues a job too (personId null), which ends here having sent nothing. A link is made per
 * attempt: an attempt that fails deletes its own link, so only a sent link can be spent.
 */
export function signInHandler(options: SignInJobOptions): JobHandler<{ personId: string | null; locale: string }> {
  return {
    queue: SIGN_IN_QUEUE,
    async run(job) {
      const { db, clock } = options;
      const workspaceId = job.workspaceId;
      if (job.payload.personId === null) return { sent: false, reason: 'UNKNOWN_ADDRESS' };
      const email = await findLivePersonEmail(db, workspaceId, job.payload.personId);
      if (email === undefined) return { sent: false, reason: 'NO_LIVE_PERSON' };
      if (!options.mailer || !options.publicUrl) return { sent: false, reason: 'SMTP_NOT_CONFIGURED' };
      const workspace = (await findWorkspaceName(db, workspaceId)) ?? '';
      const i18n = translator(chooseLocale(job.payload.locale, undefined));
      const link = await issueSignInLink(db, workspaceId, job.payload.personId, clock.now().toISOString());
      const values = { workspace, link: signInLinkUrl(options.publicUrl, link.token), minutes: linkLifetimeMinutes };
      const result = await options.mailer.send({
        to: email,
        subject: i18n.t('hub.email.subject', values),
        text: i18n.t('hub.email.body', values),
        html: null,
        messageId: `sign-in-${link.linkId}`,
        unsubscribeUrl: null,
      });
      if (result.outcome !== 'SENT') {
        await withdrawSignInLink(db, workspaceId, link.linkId);
        if (result.outcome === 'TEMPORARY') throw new TryAgain(`The sign-in link was not sent (SMTP ${result.smtpCode ?? 'no answer'}): tried again later`);
        return { sent: false, reason: result.reason, smtpCode: result.smtpCode };
      }
      return { sent: true, linkId: link.linkId };
    },
  };
}

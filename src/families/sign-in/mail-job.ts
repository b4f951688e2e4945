import type { Kysely } from 'kysely';
import type { Clock } from '../../clock.js';
import type { DB } from '../../db/schema.js';
import type { JobHandler } from '../../jobs/queue.js';
import type { Mailer } from '../messages/mailer.js';
import { deleteLink, findUser } from './queries.js';
import { INVITATION_DAYS, issueLink, LINK_MINUTES, USER_MAIL_QUEUE, type UserMailPayload } from './service.js';

export interface UserMailJobOptions {
  db: Kysely<DB>;
  clock: Clock;
  mailer: Mailer | undefined;
  publicUrl: string | undefined;
}

class TryAgain extends Error {}

/** The console page a link opens; the token in the fragment, which browsers never send to a server. */
export const invitationUrl = (publicUrl: string, token: string) => `${publicUrl.replace(/\/+$/, '')}/console/invitation#${token}`;
export const signInLinkUrl = (publicUrl: string, token: string) => `${publicUrl.replace(/\/+$/, '')}/console/sign-in/link#${token}`;

/**
 * Sends a user's invitation or sign-in link. A request for an address that is no ACTIVE user's
 * queues a job too (userId null), which ends here having sent nothing. The link is made per
 * attempt (replacing the user's earlier open ones): an attempt that fails deletes its own link,
 * so only a sent link can be spent.
 */
export function userMailHandler(options: UserMailJobOptions): JobHandler<UserMailPayload> {
  return {
    queue: USER_MAIL_QUEUE,
    async run(job) {
      const { db, clock } = options;
      const { userId, purpose } = job.payload;
      if (userId === null) return { sent: false, reason: 'UNKNOWN_ADDRESS' };
      const user = await findUser(db, job.workspaceId, userId);
      const wanted = purpose === 'INVITATION' ? 'INVITED' : 'ACTIVE';
      if (!user || user.status !== wanted) return { sent: false, reason: 'NOT_' + wanted };
      if (!options.mailer || !options.publicUrl) return { sent: false, reason: 'SMTP_NOT_CONFIGURED' };
      const workspace = (await db.selectFrom('workspaces').where('workspace_id', '=', job.workspaceId).select('name').executeTakeFirst())?.name ?? '';
      const link = await issueLink(db, job.workspaceId, userId, purpose, clock.now().toISOString());
      const mail =
        purpose === 'INVITATION'
          ? {
              subject: `You are invited to ${workspace}`,
              text: `You are invited to join ${workspace}.\n\nAccept the invitation here (the link works once, for ${INVITATION_DAYS} days):\n${invitationUrl(options.publicUrl, link.token)}\n\nIf you did not expect this, ignore this email.\n`,
            }
          : {
              subject: `Your link to sign in to ${workspace}`,
              text: `Sign in to ${workspace} with this link (it works once, for ${LINK_MINUTES} minutes):\n${signInLinkUrl(options.publicUrl, link.token)}\n\nIf you did not ask for it, ignore this email.\n`,
            };
      const result = await options.mailer.send({ to: user.email, ...mail, html: null, messageId: `user-link-${link.linkId}`, unsubscribeUrl: null });
      if (result.outcome !== 'SENT') {
        await deleteLink(db, job.workspaceId, link.linkId);
        if (result.outcome === 'TEMPORARY') throw new TryAgain(`The ${purpose.toLowerCase()} link was not sent (SMTP ${result.smtpCode ?? 'no answer'}): tried again later`);
        return { sent: false, reason: result.reason, smtpCode: result.smtpCode };
      }
      return { sent: true, linkId: link.linkId };
    },
  };
}

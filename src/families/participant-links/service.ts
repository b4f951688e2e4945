import type { Kysely } from 'kysely';
import type { CallContext } from '../../context.js';
import type { DB, ParticipantLinkPurpose } from '../../db/schema.js';
import { notFound } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { findParticipant, studyExists } from '../participants/queries.js';
import * as queries from './queries.js';
import { isLinkTokenShaped, linkTokenDigest, newLinkToken, participantLinkUrl } from './tokens.js';

/**
 * How long a link opens its page. A screener or consent link also stops being useful when its
 * study closes (the page says so); a withdrawal link never expires: a person may withdraw a
 * consent at any time, as long as the service holds it.
 */
export const linkLifetimeDays: Record<ParticipantLinkPurpose, number | null> = { SCREENER: 90, CONSENT: 90, WITHDRAWAL: null, SCHEDULING: 180 };

export interface IssuedLink {
  linkId: string;
  purpose: ParticipantLinkPurpose;
  url: string;
  expiresAt: string | null;
}

function expiryOf(purpose: ParticipantLinkPurpose, at: string): string | null {
  const days = linkLifetimeDays[purpose];
  return days === null ? null : new Date(Date.parse(at) + days * 86_400_000).toISOString();
}

/**
 * Makes a link of `purpose` for a participant, in the caller's transaction when it has one. The
 * token appears only in the answer (and in the message that carries it); the table keeps its
 * digest.
 */
export async function issueLink(
  db: Kysely<DB>,
  input: { workspaceId: string; participantId: string; studyId: string; personId: string; purpose: ParticipantLinkPurpose; publicUrl: string; at: string; messageId?: string; createdByUserId?: string },
): Promise<IssuedLink> {
  const { token, sha256 } = newLinkToken();
  const linkId = newId('lnk', Date.parse(input.at));
  const expiresAt = expiryOf(input.purpose, input.at);
  await queries.insertLink(db, {
    workspaceId: input.workspaceId,
    linkId,
    participantId: input.participantId,
    studyId: input.studyId,
    personId: input.personId,
    purpose: input.purpose,
    sha256,
    messageId: input.messageId ?? null,
    createdByUserId: input.createdByUserId ?? null,
    at: input.at,
    expiresAt,
  });
  return { linkId, purpose: input.purpose, url: participantLinkUrl(input.publicUrl, token), expiresAt };
}

/** POST /studies/{studyId}/participants/{participantId}/links: a participant's link, for the team to hand over themselves. */
export async function issueLinkForParticipant(context: CallContext, studyId: string, participantId: string, purpose: ParticipantLinkPurpose, publicUrl: string): Promise<IssuedLink> {
  return context.db.transaction().execute(async (transaction) => {
    if (!(await studyExists(transaction, context.workspaceId, studyId))) throw notFound('Study', ['studyId']);
    const participant = await findParticipant(transaction, context.workspaceId, studyId, participantId);
    if (!participant) throw notFound('Participant', ['participantId']);
    return issueLink(transaction, {
      workspaceId: context.workspaceId,
      participantId,
      studyId,
      personId: participant.person_id,
      purpose,
      publicUrl,
      at: context.clock.now().toISOString(),
      createdByUserId: context.userId,
    });
  });
}

export interface ResolvedLink {
  workspaceId: string;
  linkId: string;
  participantId: string;
  studyId: string;
  personId: string;
  purpose: ParticipantLinkPurpose;
}

/**
 * The link a token opens, or why not: `unknown` for a token that is malformed, was never made, or
 * was made and since deleted (indistinguishable on purpose); `expired` past its time.
 */
export async function resolveLink(anyScopeDb: Kysely<DB>, token: string, now: string): Promise<{ link: ResolvedLink } | { refused: 'unknown' | 'expired' }> {
  if (!isLinkTokenShaped(token)) return { refused: 'unknown' };
  const row = await queries.findLinkByDigest(anyScopeDb, linkTokenDigest(token));
  if (!row) return { refused: 'unknown' };
  if (row.expires_at !== null && Date.parse(row.expires_at) <= Date.parse(now)) return { refused: 'expired' };
  return {
    link: { workspaceId: row.workspace_id, linkId: row.link_id, participantId: row.participant_id, studyId: row.study_id, personId: row.person_id, purpose: row.purpose },
  };
}

export const openLinkPage = queries.openLinkPage;
export type { LinkPageFacts } from './queries.js';
/** A link of no use (the email that would carry it was not sent). */
export const deleteLink = queries.deleteLink;
export const deleteLinksOfMessage = queries.deleteLinksOfMessage;
export const deleteLinksOfPeople = queries.deleteLinksOfPeople;

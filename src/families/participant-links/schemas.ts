import { Type, type Static } from '@sinclair/typebox';

export const LinkPurpose = Type.Union([Type.Literal('SCREENER')], {
  description:
    "What the link opens: SCREENER, the study's screener (the participant's answers). The consent and withdrawal pages are not served yet; their links will be made by this operation too.",
});

export const IssueLinkBody = Type.Object({ purpose: LinkPurpose }, { additionalProperties: false });
export type IssueLinkBody = Static<typeof IssueLinkBody>;

export const IssuedLink = Type.Object(
  {
    linkId: Type.String({ description: 'The link\'s id (lnk_…); the link itself is shown only in this answer.' }),
    purpose: LinkPurpose,
    url: Type.String({ description: 'The page the participant opens: PUBLIC_URL/p/<token>. The token (256 random bits) is not kept: only its SHA-256 is, so this is the one time it can be read.' }),
    expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the link stops opening its page; null: never (withdrawal).' }),
  },
  { $id: 'ParticipantLink', title: 'ParticipantLink' },
);

export const participantLinkSchemas = [IssuedLink];

import { Type, type Static } from '@sinclair/typebox';

export const LinkPurpose = Type.Union([Type.Literal('SCREENER'), Type.Literal('CONSENT'), Type.Literal('WITHDRAWAL'), Type.Literal('SCHEDULING')], {
  description:
    "What the link opens: SCREENER, the study's screener (then its consent form, when the study plan's consentFormId names one of the workspace's consent forms); " +
    "CONSENT, the consent form straight away; WITHDRAWAL, the page where the person withdraws their consent to the study (it never expires, and shows only the study's public name); " +
    'SCHEDULING, the study\'s open times to book a session, then the session booked, to move or cancel while the study allows (180 days). ' +
    "The signed copy's email carries a WITHDRAWAL link of its own.",
});

export const IssueLinkBody = Type.Object({ purpose: LinkPurpose }, { additionalProperties: false, examples: [{ purpose: 'SCREENER' }] });
export type IssueLinkBody = Static<typeof IssueLinkBody>;

export const IssuedLink = Type.Object(
  {
    linkId: Type.String({ description: 'The link\'s id (lnk_…); the link itself is shown only in this answer.' }),
    purpose: LinkPurpose,
    url: Type.String({ description: 'The page the participant opens: PUBLIC_URL/p/<token>. The token (256 random bits) is not kept: only its SHA-256 is, so this is the one time it can be read.' }),
    expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the link stops opening its page; null: never (withdrawal).' }),
  },
  {
    $id: 'ParticipantLink',
    title: 'ParticipantLink',
    examples: [{ linkId: 'lnk_01KB4Z7N3M8Q2R5T6V7W8X9Y0Z', purpose: 'SCREENER', url: 'https://recruit.example.com/p/3q2-7wEYk9Gm1pQxZ0aBcD4eF5gH6iJ7kL8mN9oP0rS', expiresAt: '2027-02-26T09:30:00.000Z' }],
  },
);

export const participantLinkSchemas = [IssuedLink];

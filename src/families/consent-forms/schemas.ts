import { type Static, Type } from '@sinclair/typebox';
import { IsoDateTime, paged, Text } from '../../http/schemas.js';

export const bodyLengthMax = 50_000;
export const statementsMax = 20;
/** A form keeps every version it had, listed whole in its history: past this, make a new form. */
export const versionsMax = 200;

export const contentHashDescription =
  'Lower-case hex SHA-256 of the version\'s canonical content: the UTF-8 bytes of the JSON text ' +
  '`{"body":…,"language":…,"optionalChoices":[{"id":…,"text":…},…],"requiredStatements":[{"id":…,"text":…},…],"title":…}` — ' +
  'exactly these keys, in this (alphabetical) order at every level, no whitespace, strings escaped as JSON.stringify does, statements and choices in the order given, ' +
  'text as written (no Unicode normalisation): the RFC 8785 canonical form of those five fields. ' +
  'The consent pages record it as the consent submission\'s `textSha256`, so a consent names the exact wording agreed to.';

export const consentFormIdNote =
  "A study plan's (or signup form's) `consentFormId` stays free text, as before: when it is the id of a consent form of the workspace (`cfm_…`), " +
  "the participant's consent page serves that form's current version; any other value names a form kept elsewhere (paper, another tool) and is recorded as it is.";

const Statement = (what: string) =>
  Type.Object(
    {
      id: Type.String({
        pattern: '^[a-z0-9][a-z0-9_-]{0,63}$',
        description: `The ${what}'s id, unique within the version among statements and choices alike: 1–64 of a–z, 0–9, \`_\`, \`-\`, starting with a letter or digit. What a consent records.`,
      }),
      text: Text({ minLength: 1, maxLength: 1000, description: `What the person ${what === 'statement' ? 'must tick' : 'may tick'}, as plain text (at most 1,000 characters).` }),
    },
    { additionalProperties: false },
  );

const versionFields = {
  title: Text({ minLength: 1, maxLength: 200, description: 'The heading the person sees (at most 200 characters).' }),
  body: Text({
    minLength: 1,
    maxLength: bodyLengthMax,
    description:
      `The form's text in Markdown (CommonMark: headings, paragraphs, lists, emphasis, links), at most ${bodyLengthMax.toLocaleString('en')} characters. ` +
      'Raw HTML is shown as text, images are not shown, and links only keep http, https and mailto addresses.',
  }),
  language: Type.String({ pattern: '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$', description: "The text's language: a short code, as a study plan's `language`.", examples: ['en', 'ar'] }),
  requiredStatements: Type.Array(Statement('statement'), {
    maxItems: statementsMax,
    description: `What the person must tick, every one, to sign (at most ${statementsMax}); may be empty.`,
  }),
  optionalChoices: Type.Array(Statement('choice'), {
    maxItems: statementsMax,
    description: `What the person may agree to or not, e.g. being recorded (at most ${statementsMax}); may be empty.`,
  }),
};

const exampleContent = {
  title: 'Consent to take part in a research interview',
  body: '## What happens\n\nWe talk for **45 minutes** about how you pay online.\n\n- You can stop at any time.\n- Questions: [research@example.org](mailto:research@example.org)',
  language: 'en',
  requiredStatements: [
    { id: 'read-and-understood', text: 'I have read and understood this information.' },
    { id: 'voluntary', text: 'I take part voluntarily and may withdraw at any time.' },
  ],
  optionalChoices: [{ id: 'recording', text: 'I agree to be video-recorded.' }],
};
const exampleVersion = {
  consentFormId: 'cfm_01JD0000000000000000000000',
  version: 2,
  ...exampleContent,
  bodyHtml:
    '<h2>What happens</h2>\n<p>We talk for <strong>45 minutes</strong> about how you pay online.</p>\n<ul>\n<li>You can stop at any time.</li>\n<li>Questions: <a href="mailto:research@example.org" rel="noopener noreferrer">research@example.org</a></li>\n</ul>\n',
  contentSha256: '35551bfee7c672cc301f7bca3233ecf6e25e5b544e9984f7cb12d49d738b73a3',
  createdAt: '2026-12-06T10:00:00.000Z',
  createdByUserId: 'usr_01JD0000000000000000000000',
};
const exampleSummary = {
  version: 2,
  title: exampleContent.title,
  language: 'en',
  contentSha256: exampleVersion.contentSha256,
  createdAt: exampleVersion.createdAt,
  createdByUserId: exampleVersion.createdByUserId,
};

export const ConsentFormVersion = Type.Object(
  {
    consentFormId: Type.String(),
    version: Type.Integer({ minimum: 1, description: 'Numbered 1, 2, … in the order published.' }),
    ...versionFields,
    bodyHtml: Type.String({
      description:
        '`body` rendered to HTML by the server, safe to place in a page as it is: no raw HTML, no script, style, event attribute or image, and links only to http, https and mailto addresses, with `rel="noopener noreferrer"`.',
    }),
    contentSha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: contentHashDescription }),
    createdAt: IsoDateTime('When the version was published.'),
    createdByUserId: Type.String({ description: 'The user whose token published it.' }),
  },
  {
    $id: 'ConsentFormVersion',
    title: 'ConsentFormVersion',
    description: 'One published version of a consent form: immutable, so that a consent that names it names exactly what was shown.',
    examples: [exampleVersion],
  },
);
export type ConsentFormVersion = Static<typeof ConsentFormVersion>;

export const ConsentFormVersionSummary = Type.Object(
  {
    version: Type.Integer({ minimum: 1 }),
    title: Type.String(),
    language: Type.String(),
    contentSha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    createdAt: IsoDateTime(),
    createdByUserId: Type.String(),
  },
  { $id: 'ConsentFormVersionSummary', title: 'ConsentFormVersionSummary', description: 'A version in a form\'s history; read it whole at `GET /consent-forms/{consentFormId}/versions/{version}`.', examples: [exampleSummary] },
);

const formDescription =
  'A consent form the workspace asks people to sign, in versions: publishing a new version makes it the current one (`currentVersion`, with its text), and the versions before it stay as they were (`versions`, newest first). ' +
  consentFormIdNote;

export const ConsentForm = Type.Object(
  {
    consentFormId: Type.String(),
    name: Type.String({ description: 'What the workspace calls the form; need not be unique.' }),
    currentVersion: Type.Ref(ConsentFormVersion),
    versions: Type.Array(Type.Ref(ConsentFormVersionSummary), { description: 'Every version, newest first.' }),
    createdAt: IsoDateTime(),
    updatedAt: IsoDateTime('When the last version was published.'),
    createdByUserId: Type.String(),
  },
  {
    $id: 'ConsentForm',
    title: 'ConsentForm',
    description: formDescription,
    examples: [{ consentFormId: exampleVersion.consentFormId, name: 'Interview consent', currentVersion: exampleVersion, versions: [exampleSummary, { ...exampleSummary, version: 1, contentSha256: 'a'.repeat(64), createdAt: '2026-12-01T10:00:00.000Z' }], createdAt: '2026-12-01T10:00:00.000Z', updatedAt: exampleVersion.createdAt, createdByUserId: exampleVersion.createdByUserId }],
  },
);
export type ConsentForm = Static<typeof ConsentForm>;

export const ConsentFormListItem = Type.Object(
  {
    consentFormId: Type.String(),
    name: Type.String(),
    currentVersion: Type.Ref(ConsentFormVersionSummary),
    createdAt: IsoDateTime(),
    updatedAt: IsoDateTime(),
  },
  { $id: 'ConsentFormListItem', title: 'ConsentFormListItem', description: 'A consent form in a list, its current version without the text: read it whole at `GET /consent-forms/{consentFormId}`.' },
);
export type ConsentFormListItem = Static<typeof ConsentFormListItem>;
const exampleListItem = { consentFormId: exampleVersion.consentFormId, name: 'Interview consent', currentVersion: exampleSummary, createdAt: '2026-12-01T10:00:00.000Z', updatedAt: exampleVersion.createdAt };

export const ConsentFormList = paged(Type.Ref(ConsentFormListItem), 'ConsentFormList', exampleListItem);

export const PublishVersionBody = Type.Object(versionFields, { additionalProperties: false, examples: [exampleContent] });
export type PublishVersionBody = Static<typeof PublishVersionBody>;

export const CreateConsentFormBody = Type.Object(
  { name: Text({ minLength: 1, maxLength: 200, description: 'What the workspace calls the form; need not be unique.' }), ...versionFields },
  { additionalProperties: false, examples: [{ name: 'Interview consent', ...exampleContent }] },
);
export type CreateConsentFormBody = Static<typeof CreateConsentFormBody>;

export const ConsentFormParams = Type.Object({ consentFormId: Type.String({ minLength: 1, maxLength: 100 }) });
export const ConsentFormVersionParams = Type.Object({
  consentFormId: Type.String({ minLength: 1, maxLength: 100 }),
  version: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'The version number (1, 2, …).' }),
});

export const consentFormSchemas = [ConsentFormVersion, ConsentFormVersionSummary, ConsentForm, ConsentFormListItem];

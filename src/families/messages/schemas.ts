import { type Static, Type } from '@sinclair/typebox';
import { IsoDateTime, paged, Text } from '../../http/schemas.js';
import { sourceLengthMax, variableCatalogue } from './template-language.js';

/** Where preview links point: a reserved domain (RFC 2606), so a placeholder can never reach anyone. */
export const PLACEHOLDER_LINK_BASE = 'https://placeholder.invalid/preview';

export const templateLanguageDescription =
  'Subject, text body and HTML body are [Liquid](https://shopify.github.io/liquid/) templates (LiquidJS): ' +
  '`{{ person.firstName | default: "there" }}`, `{% if study.externalName != "" %}…{% endif %}`, `{% for %}`, `{% assign %}` and the standard filters, ' +
  'but no `include`, `render` or `layout` (templates read no files) and no `raw` filter. ' +
  'Every variable a template reads must be one of the catalogue below; an unknown one, or a syntax error, is a 400 whose `path` names the field ' +
  '(`["subject"]`, `["textBody"]`, `["htmlBody"]`) and whose message names the variable and its line and column. ' +
  'The HTML body escapes every value it outputs (`<` becomes `&lt;`); the subject and text body output values as they are. ' +
  'Variables a message has no value for (no study given, a person without a first name) render empty. ' +
  'A token without the personal-data right may not save a field that reads `person.*` (403, `WWW-Authenticate` naming `scope="personal-data"`): ' +
  "a template could carry the person's values to an address of the writer's choosing; it may save fields that do not, and send and preview any template.\n\n" +
  'Variables:\n' +
  variableCatalogue.map((variable) => `- \`${variable.name}\`: ${variable.description} Example: \`${variable.example}\`.`).join('\n') +
  '\n\nIn a preview the `links.*` variables are placeholders under `' +
  PLACEHOLDER_LINK_BASE +
  '/…` (a reserved domain that resolves nowhere), listed in the answer\'s `placeholders`: the real links, signed per person, are made when a message is sent.';

const exampleTemplate = {
  templateId: 'mtp_01JD0000000000000000000000',
  name: 'Interview invitation',
  subject: 'Join our study: {{ study.externalName }}',
  textBody: 'Hi {{ person.firstName | default: "there" }},\n\nWould you take part in {{ study.externalName }}? Book a time: {{ links.scheduling }}\n\nUnsubscribe: {{ links.unsubscribe }}',
  htmlBody: '<p>Hi {{ person.firstName | default: "there" }},</p><p>Would you take part in <b>{{ study.externalName }}</b>? <a href="{{ links.scheduling }}">Book a time</a></p>',
  createdAt: '2026-11-27T10:00:00.000Z',
  updatedAt: '2026-11-27T10:00:00.000Z',
};

const Name = Text({ minLength: 1, maxLength: 200, description: 'What the workspace calls the template; need not be unique.' });
const Subject = Type.String({
  minLength: 1,
  maxLength: sourceLengthMax.subject,
  pattern: '^[^\\r\\n]*$',
  description: `A Liquid template of one line, at most ${sourceLengthMax.subject} characters.`,
});
const TextBody = Type.String({ minLength: 1, maxLength: sourceLengthMax.textBody, description: `A Liquid template, at most ${sourceLengthMax.textBody} characters. Values are output as they are.` });
const HtmlBody = Type.String({ minLength: 1, maxLength: sourceLengthMax.htmlBody, description: `A Liquid template, at most ${sourceLengthMax.htmlBody} characters. Values are HTML-escaped.` });

export const MessageTemplate = Type.Object(
  {
    templateId: Type.String(),
    name: Type.String(),
    subject: Type.String(),
    textBody: Type.String(),
    htmlBody: Type.Union([Type.String(), Type.Null()], { description: 'Null: the message is text only.' }),
    createdAt: IsoDateTime(),
    updatedAt: IsoDateTime(),
  },
  { $id: 'MessageTemplate', title: 'MessageTemplate', description: `A message the workspace sends to people, with variables.\n\n${templateLanguageDescription}`, examples: [exampleTemplate] },
);
export type MessageTemplate = Static<typeof MessageTemplate>;

export const MessageTemplateList = paged(Type.Ref(MessageTemplate), 'MessageTemplateList', exampleTemplate);

export const CreateMessageTemplateBody = Type.Object(
  { name: Name, subject: Subject, textBody: TextBody, htmlBody: Type.Optional(HtmlBody) },
  {
    additionalProperties: false,
    examples: [{ name: exampleTemplate.name, subject: exampleTemplate.subject, textBody: exampleTemplate.textBody, htmlBody: exampleTemplate.htmlBody }],
  },
);
export type CreateMessageTemplateBody = Static<typeof CreateMessageTemplateBody>;

export const UpdateMessageTemplateBody = Type.Object(
  {
    name: Type.Optional(Name),
    subject: Type.Optional(Subject),
    textBody: Type.Optional(TextBody),
    htmlBody: Type.Optional(Type.Union([HtmlBody, Type.Null()], { description: 'null removes the HTML body: the message becomes text only.' })),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ subject: 'A reminder: {{ study.externalName }}' }] },
);
export type UpdateMessageTemplateBody = Static<typeof UpdateMessageTemplateBody>;

export const TemplateParams = Type.Object({ templateId: Type.String({ minLength: 1, maxLength: 100 }) });

export const PreviewBody = Type.Object(
  {
    personId: Type.String({ minLength: 1, maxLength: 100, description: 'The person the message is rendered for: a live person of the workspace.' }),
    studyId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'The study it is about; without it, `study.*` render empty.' })),
  },
  { additionalProperties: false, examples: [{ personId: 'per_01JD0000000000000000000000', studyId: 'stu_01JD0000000000000000000000' }] },
);
export type PreviewBody = Static<typeof PreviewBody>;

export const MessagePreview = Type.Object(
  {
    templateId: Type.String(),
    personId: Type.String(),
    studyId: Type.Union([Type.String(), Type.Null()]),
    subject: Type.String(),
    textBody: Type.String(),
    htmlBody: Type.Union([Type.String(), Type.Null()], { description: 'Null when the template has no HTML body.' }),
    placeholders: Type.Array(Type.String(), { description: 'The variables rendered with a placeholder rather than their real value (the links, made when a message is sent).' }),
  },
  {
    title: 'MessagePreview',
    examples: [
      {
        templateId: exampleTemplate.templateId,
        personId: 'per_01JD0000000000000000000000',
        studyId: 'stu_01JD0000000000000000000000',
        subject: 'Join our study: Tell us about paying online',
        textBody: `Hi Ada,\n\nWould you take part in Tell us about paying online? Book a time: ${PLACEHOLDER_LINK_BASE}/scheduling\n\nUnsubscribe: ${PLACEHOLDER_LINK_BASE}/unsubscribe`,
        htmlBody: `<p>Hi Ada,</p><p>Would you take part in <b>Tell us about paying online</b>? <a href="${PLACEHOLDER_LINK_BASE}/scheduling">Book a time</a></p>`,
        placeholders: ['links.screener', 'links.scheduling', 'links.unsubscribe'],
      },
    ],
  },
);

export const messageSchemas = [MessageTemplate];

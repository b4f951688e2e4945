import type { Translator } from './i18n.js';
import { ErrorSummary, type FieldError, Page } from './layout.js';

/** What the person sent: the statements ticked, the choices ticked, the name typed (as posted). */
export interface PostedConsent {
  statements: string[];
  choices: string[];
  signedName: string;
}

export interface ConsentPageProps {
  i18n: Translator;
  from: string;
  /** The version's title: the page's heading. */
  title: string;
  version: number;
  /** The version's body, rendered from Markdown by the consent-forms family (safe: nothing runs or reaches out). */
  bodyHtml: string;
  requiredStatements: { id: string; text: string }[];
  optionalChoices: { id: string; text: string }[];
  action: string;
  formToken: string;
  posted?: PostedConsent;
  /** Errors by control id (`statement-<n>`, `signed-name`), in the order the form shows them. */
  errors?: Map<string, string>;
  /** The form changed since the page was served: the person reads the new version first. */
  changed?: boolean;
}

export const statementControlId = (index: number) => `statement-${index}`;
export const choiceControlId = (index: number) => `choice-${index}`;
export const nameControlId = 'signed-name';

/**
 * The body's headings under the page's own (the form's title, the one h1): the body's highest
 * level becomes h2, and no heading goes more than one level below the one before it (WCAG's
 * heading order, whatever levels the team's Markdown used). The HTML is markdown-it's output,
 * where text is escaped, so a tag is a real tag, and each opening tag has its closing one.
 */
export function demoteHeadings(html: string): string {
  const levels = [...html.matchAll(/<h([1-6])(?=[\s>])/g)].map((match) => Number(match[1]));
  if (levels.length === 0) return html;
  const shift = 2 - Math.min(...levels);
  let previous = 1;
  const open: number[] = [];
  return html.replace(/<(\/?)h([1-6])(?=[\s>])/g, (_match, slash: string, level: string) => {
    if (slash) return `</h${open.shift() ?? Math.min(6, Number(level) + shift)}`;
    const placed = Math.max(2, Math.min(6, Number(level) + shift, previous + 1));
    previous = placed;
    open.push(placed);
    return `<h${placed}`;
  });
}

function ErrorText({ id, i18n, message }: { id: string; i18n: Translator; message: string | undefined }) {
  if (!message) return null;
  return (
    <span class="error-message" id={id}>
      <span class="visually-hidden">{i18n.t('errors.summaryTitle')}: </span>
      {message}
    </span>
  );
}

/**
 * The consent form to sign: the version's title and text, a tick box per required statement (each
 * its own error), the optional choices, the typed full name that signs it, and one button. The
 * errors sit beside their fields and are summarised at the top with links to them.
 */
export function ConsentPage(props: ConsentPageProps) {
  const { i18n } = props;
  const errors = props.errors ?? new Map<string, string>();
  const fieldNames = new Map<string, string>([...props.requiredStatements.map((statement, index): [string, string] => [statementControlId(index), statement.text]), [nameControlId, i18n.t('consent.name.label')]]);
  const summary: FieldError[] = [...errors.entries()].map(([fieldId, message]) => ({ fieldId, field: fieldNames.get(fieldId) ?? '', message }));
  const ticked = new Set(props.posted?.statements ?? []);
  const chosen = new Set(props.posted?.choices ?? []);
  const nameError = errors.get(nameControlId);
  return (
    <Page i18n={i18n} title={props.title} from={props.from}>
      <ErrorSummary i18n={i18n} errors={summary} />
      {props.changed ? (
        <p class="notice" role="status">
          {i18n.t('consent.changed')}
        </p>
      ) : null}
      <p class="hint">{i18n.t('consent.version', { version: props.version })}</p>
      <p>{i18n.t('consent.intro')}</p>
      <div class="consent-text" dangerouslySetInnerHTML={{ __html: demoteHeadings(props.bodyHtml) }} />
      <form method="post" action={props.action} novalidate>
        <input type="hidden" name="formToken" value={props.formToken} />
        <input type="hidden" name="version" value={String(props.version)} />
        {props.requiredStatements.length > 0 ? (
          <fieldset class="question">
            <legend>{i18n.t('consent.statements.legend')}</legend>
            {props.requiredStatements.map((statement, index) => {
              const id = statementControlId(index);
              const error = errors.get(id);
              return (
                <div class={error ? 'statement has-error' : 'statement'}>
                  <ErrorText id={`${id}-error`} i18n={i18n} message={error} />
                  <div class="choice">
                    <input
                      type="checkbox"
                      id={id}
                      name="statement"
                      value={statement.id}
                      checked={ticked.has(statement.id)}
                      required
                      aria-invalid={error ? 'true' : undefined}
                      aria-describedby={error ? `${id}-error` : undefined}
                    />
                    <label for={id}>{statement.text}</label>
                  </div>
                </div>
              );
            })}
          </fieldset>
        ) : null}
        {props.optionalChoices.length > 0 ? (
          <fieldset class="question" aria-describedby="choices-hint">
            <legend>{i18n.t('consent.choices.legend')}</legend>
            <span class="hint" id="choices-hint">
              {i18n.t('consent.choices.hint')}
            </span>
            {props.optionalChoices.map((choice, index) => (
              <div class="choice">
                <input type="checkbox" id={choiceControlId(index)} name="choice" value={choice.id} checked={chosen.has(choice.id)} />
                <label for={choiceControlId(index)}>{choice.text}</label>
              </div>
            ))}
          </fieldset>
        ) : null}
        <div class={nameError ? 'question has-error' : 'question'}>
          <label for={nameControlId}>{i18n.t('consent.name.label')}</label>
          <span class="hint" id={`${nameControlId}-hint`}>
            {i18n.t('consent.name.hint')}
          </span>
          <ErrorText id={`${nameControlId}-error`} i18n={i18n} message={nameError} />
          <input
            type="text"
            id={nameControlId}
            name="signedName"
            value={props.posted?.signedName ?? ''}
            autocomplete="name"
            maxLength={200}
            required
            aria-invalid={nameError ? 'true' : undefined}
            aria-describedby={[`${nameControlId}-hint`, nameError ? `${nameControlId}-error` : ''].filter(Boolean).join(' ')}
          />
        </div>
        <button type="submit" class="primary">
          {i18n.t('consent.submit')}
        </button>
      </form>
    </Page>
  );
}

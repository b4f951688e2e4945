import type { Translator } from './i18n.js';
import { ErrorSummary, type FieldError, Page } from './layout.js';

/** A question as the page shows it: what the studies family defines, in the page's terms. */
export interface QuestionView {
  /** The question's stable id: the form field's name (`q_<id>`) and the control's id. */
  id: string;
  text: string;
  description: string | null;
  required: boolean;
  kind: 'text' | 'longText' | 'number' | 'date' | 'email' | 'phone' | 'single' | 'multi';
  choices: { id: string; label: string }[];
}

/** What a person sent: each field's values as posted (several for a multiple choice). */
export type PostedAnswers = Record<string, string[]>;

export const fieldNameOf = (question: QuestionView) => `q_${question.id}`;
const controlIdOf = (question: QuestionView, choiceIndex?: number) => (choiceIndex === undefined ? `q-${question.id}` : `q-${question.id}-${choiceIndex}`);

/** The id the error summary links to: the control, or a multiple-choice question's first option. */
export function errorTargetOf(question: QuestionView): string {
  return question.kind === 'single' || question.kind === 'multi' ? controlIdOf(question, 0) : controlIdOf(question);
}

export interface ScreenerPageProps {
  i18n: Translator;
  from: string;
  study: string;
  description?: string | undefined;
  questions: QuestionView[];
  /** Where the form posts: the page's own path. */
  action: string;
  formToken: string;
  /** When the page was first served (milliseconds): the form carries it back, vouched for by its token, for the time to complete. */
  startedAt: string;
  answers?: PostedAnswers;
  errors?: Map<string, string>;
}

const inputTypes = { text: 'text', email: 'email', phone: 'tel', number: 'text', date: 'date' } as const;
const autocomplete = { email: 'email', phone: 'tel' } as const;

function Question({ question, i18n, answers, error }: { question: QuestionView; i18n: Translator; answers: string[]; error: string | undefined }) {
  const name = fieldNameOf(question);
  const hintId = question.description ? `${controlIdOf(question)}-hint` : undefined;
  const errorId = error ? `${controlIdOf(question)}-error` : undefined;
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined;
  const label = (
    <>
      {question.text}
      {question.required ? null : <span> {i18n.t('screener.optional')}</span>}
    </>
  );
  const hint = question.description ? (
    <span class="hint" id={hintId}>
      {question.description}
    </span>
  ) : null;
  const errorText = error ? (
    <span class="error-message" id={errorId}>
      <span class="visually-hidden">{i18n.t('errors.summaryTitle')}: </span>
      {error}
    </span>
  ) : null;
  const className = error ? 'question has-error' : 'question';

  if (question.kind === 'single' || question.kind === 'multi') {
    const type = question.kind === 'single' ? 'radio' : 'checkbox';
    return (
      <fieldset class={className} aria-describedby={describedBy}>
        <legend>{label}</legend>
        {hint}
        {errorText}
        {question.choices.map((choice, index) => (
          <div class="choice">
            <input type={type} id={controlIdOf(question, index)} name={name} value={choice.id} checked={answers.includes(choice.id)} required={type === 'radio' && question.required ? true : undefined} />
            <label for={controlIdOf(question, index)}>{choice.label}</label>
          </div>
        ))}
      </fieldset>
    );
  }
  const value = answers[0] ?? '';
  const common = {
    id: controlIdOf(question),
    name,
    required: question.required ? true : undefined,
    'aria-invalid': error ? ('true' as const) : undefined,
    'aria-describedby': describedBy,
  };
  return (
    <div class={className}>
      <label for={controlIdOf(question)}>{label}</label>
      {hint}
      {errorText}
      {question.kind === 'longText' ? (
        <textarea {...common} rows={5} maxLength={5000}>
          {value}
        </textarea>
      ) : (
        <input
          {...common}
          type={inputTypes[question.kind]}
          value={value}
          {...(question.kind === 'number' ? { inputMode: 'decimal' as const } : {})}
          {...(question.kind === 'email' || question.kind === 'phone' ? { autocomplete: autocomplete[question.kind] } : {})}
          {...(question.kind === 'text' ? { maxLength: 500 } : {})}
        />
      )}
    </div>
  );
}

/**
 * The screener: every question of the study on one page, labelled by its own text, each error
 * beside its field and summarised at the top with a link to it. A hidden field that people never
 * see (and screen readers skip) catches form-filling robots.
 */
export function ScreenerPage(props: ScreenerPageProps) {
  const { i18n } = props;
  const errors = props.errors ?? new Map<string, string>();
  const summary: FieldError[] = props.questions.filter((question) => errors.has(question.id)).map((question) => ({ fieldId: errorTargetOf(question), field: question.text, message: errors.get(question.id)! }));
  const minutes = Math.max(1, Math.ceil(props.questions.length / 4));
  return (
    <Page i18n={i18n} title={i18n.t('screener.title', { study: props.study })} from={props.from}>
      <ErrorSummary i18n={i18n} errors={summary} />
      {props.description ? <p>{props.description}</p> : null}
      <p>{i18n.t('screener.intro', { minutes })}</p>
      <form method="post" action={props.action} novalidate>
        <input type="hidden" name="formToken" value={props.formToken} />
        <input type="hidden" name="startedAt" value={props.startedAt} />
        <div class="honeypot" aria-hidden="true">
          <label for="website">Website</label>
          <input type="text" id="website" name="website" tabIndex={-1} autocomplete="off" />
        </div>
        {props.questions.map((question) => (
          <Question question={question} i18n={i18n} answers={props.answers?.[fieldNameOf(question)] ?? []} error={errors.get(question.id)} />
        ))}
        <button type="submit" class="primary">
          {i18n.t('screener.submit')}
        </button>
      </form>
    </Page>
  );
}

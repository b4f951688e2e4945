import type { EditableProperty } from '../../families/properties/service.js';
import type { Translator } from '../i18n.js';
import { ErrorSummary, type FieldError, Page } from '../layout.js';

/**
 * The person's own pages (issue 34, item 6): sign-in, the link's Continue, the hub, and the
 * erasure's confirmation. Server-rendered, no script; every change is a form with its token.
 */

const privacyOf = (i18n: Translator) => i18n.t('hub.privacy');

export const emailControlId = 'email';

export function SignInPage(props: { i18n: Translator; from: string; action: string; formToken: string; email?: string; error?: string }) {
  const { i18n } = props;
  const errors: FieldError[] = props.error ? [{ fieldId: emailControlId, field: i18n.t('hub.signIn.email'), message: props.error }] : [];
  return (
    <Page i18n={i18n} title={i18n.t('hub.signIn.title')} from={props.from} privacy={privacyOf(i18n)}>
      <ErrorSummary i18n={i18n} errors={errors} />
      <p>{i18n.t('hub.signIn.body', { workspace: props.from })}</p>
      <form method="post" action={props.action} novalidate>
        <input type="hidden" name="formToken" value={props.formToken} />
        <div class={props.error ? 'question has-error' : 'question'}>
          <label for={emailControlId}>{i18n.t('hub.signIn.email')}</label>
          <span class="hint" id="email-hint">
            {i18n.t('hub.signIn.emailHint')}
          </span>
          {props.error ? (
            <span class="error-message" id="email-error">
              {props.error}
            </span>
          ) : null}
          <input
            type="email"
            id={emailControlId}
            name="email"
            autocomplete="email"
            spellcheck={false}
            value={props.email ?? ''}
            aria-describedby={props.error ? 'email-hint email-error' : 'email-hint'}
            {...(props.error ? { 'aria-invalid': 'true' as const } : {})}
          />
        </div>
        <button type="submit" class="primary">
          {i18n.t('hub.signIn.submit')}
        </button>
      </form>
    </Page>
  );
}

/** The link's page: a button to press, so that a mail scanner opening the link spends nothing. */
export function ContinuePage(props: { i18n: Translator; from: string; action: string; formToken: string }) {
  const { i18n } = props;
  return (
    <Page i18n={i18n} title={i18n.t('hub.link.title')} from={props.from} privacy={privacyOf(i18n)}>
      <p>{i18n.t('hub.link.body')}</p>
      <form method="post" action={props.action}>
        <input type="hidden" name="formToken" value={props.formToken} />
        <button type="submit" class="primary">
          {i18n.t('hub.link.continue')}
        </button>
      </form>
    </Page>
  );
}

/** One small form: a token and a button (each change on the hub is one). */
function ButtonForm(props: { action: string; formToken: string; label: string; kind?: 'primary' | 'secondary' | 'warning' }) {
  return (
    <form method="post" action={props.action}>
      <input type="hidden" name="formToken" value={props.formToken} />
      <button type="submit" class={props.kind ?? 'secondary'}>
        {props.label}
      </button>
    </form>
  );
}

/**
 * A session with the person, as the hub lists it: a booking (with its calendar file and a button
 * that opens its page, where the person moves or cancels it) or a time the team recorded.
 */
export interface SessionView {
  studyName: string;
  startsAt: string;
  /** The zone the time is shown in: the person's from their booking, else the host's. */
  timeZone: string;
  booking?: { calendarHref: string; manageAction: string; manageLabel: string };
}

/** The person's sessions, soonest first. */
export function SessionsSection(props: { i18n: Translator; sessions: SessionView[]; manageToken: string }) {
  const { i18n } = props;
  return (
    <section class="hub-section" aria-labelledby="sessions-title">
      <h2 id="sessions-title">{i18n.t('hub.sessions.title')}</h2>
      {props.sessions.length === 0 ? (
        <p>{i18n.t('hub.sessions.none')}</p>
      ) : (
        <ul class="hub-list">
          {props.sessions.map((session) => (
            <li>
              <span class="hub-item-title">{session.studyName}</span>
              <time dateTime={session.startsAt}>{i18n.dateTime(session.startsAt, session.timeZone)}</time>
              {session.booking ? (
                <>
                  <p>
                    <a href={session.booking.calendarHref} download>
                      {i18n.t('hub.sessions.calendar', { study: session.studyName })}
                    </a>
                  </p>
                  <ButtonForm action={session.booking.manageAction} formToken={props.manageToken} label={session.booking.manageLabel} />
                </>
              ) : null}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

export type StudyState = 'invited' | 'answered' | 'booked' | 'past' | 'added';

export interface StudyView {
  participantId: string;
  studyName: string;
  state: StudyState;
  messagesStopped: boolean;
}

export interface ConsentView {
  consentId: string;
  /** The study's public name; null for a consent on a sign-up form. */
  studyName: string | null;
  givenAt: string;
  withdrawnAt: string | null;
  /** Signed on the participant's page: a signed copy (PDF) to download. */
  hasCopy: boolean;
  canWithdraw: boolean;
}

export interface ProfileField {
  property: EditableProperty;
  /** The value as the form shows it: text, or the chosen option names. */
  shown: string[];
  error?: string;
}

export type HubDone = 'saved' | 'withdrawn' | 'stopped' | 'optedOut';

export interface HubPageProps {
  i18n: Translator;
  from: string;
  done?: HubDone | undefined;
  studies: StudyView[];
  sessions: SessionView[];
  consents: ConsentView[];
  profile: ProfileField[];
  optedOut: boolean;
  /** The form token of each form, by its name (see routes.tsx). */
  tokens: { signOut: string; details: string; stop: string; stopAll: string; withdraw: string; erase: string; manage: string };
}

export const fieldId = (propertyId: string) => `property-${propertyId}`;

function ProfileControl({ i18n, field }: { i18n: Translator; field: ProfileField }) {
  const { property } = field;
  const id = fieldId(property.propertyId);
  const name = `p_${property.propertyId}`;
  const describedBy = [property.description ? `${id}-hint` : '', field.error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  const hint = property.description ? (
    <span class="hint" id={`${id}-hint`}>
      {property.description}
    </span>
  ) : null;
  const error = field.error ? (
    <span class="error-message" id={`${id}-error`}>
      {field.error}
    </span>
  ) : null;
  const invalid = field.error ? { 'aria-invalid': 'true' as const } : {};
  const choices = (options: { value: string; label: string }[], type: 'radio' | 'checkbox') => (
    <fieldset class={field.error ? 'question has-error' : 'question'} {...(describedBy ? { 'aria-describedby': describedBy } : {})}>
      <legend>{property.name}</legend>
      {hint}
      {error}
      {options.map((option, index) => (
        <div class="choice">
          <input type={type} id={index === 0 ? id : `${id}-${index}`} name={name} value={option.value} checked={field.shown.includes(option.value)} />
          <label for={index === 0 ? id : `${id}-${index}`}>{option.label}</label>
        </div>
      ))}
    </fieldset>
  );
  switch (property.propertyType) {
    case 'BOOLEAN':
      return choices(
        [
          { value: 'yes', label: i18n.t('hub.profile.yes') },
          { value: 'no', label: i18n.t('hub.profile.no') },
          { value: '', label: i18n.t('hub.profile.notSet') },
        ],
        'radio',
      );
    case 'SINGLE_SELECT':
      return choices([...property.options.map((option) => ({ value: option.name, label: option.name })), { value: '', label: i18n.t('hub.profile.notSet') }], 'radio');
    case 'MULTI_SELECT':
      return (
        <>
          {choices(
            property.options.map((option) => ({ value: option.name, label: option.name })),
            'checkbox',
          )}
          {/* A form with no box ticked sends nothing: this says the field was on the page. */}
          <input type="hidden" name={name} value="" />
        </>
      );
    default:
      return (
        <div class={field.error ? 'question has-error' : 'question'}>
          <label for={id}>{property.name}</label>
          {hint}
          {error}
          <input
            type={property.propertyType === 'DATETIME' ? 'date' : 'text'}
            id={id}
            name={name}
            value={field.shown[0] ?? ''}
            {...(property.propertyType === 'NUMBER' ? { inputMode: 'decimal' as const } : {})}
            {...(describedBy ? { 'aria-describedby': describedBy } : {})}
            {...invalid}
          />
        </div>
      );
  }
}

export function HubPage(props: HubPageProps) {
  const { i18n, tokens } = props;
  const errors: FieldError[] = props.profile.filter((field) => field.error).map((field) => ({ fieldId: fieldId(field.property.propertyId), field: field.property.name, message: field.error! }));
  return (
    <Page i18n={i18n} title={i18n.t('hub.title')} from={props.from} privacy={privacyOf(i18n)}>
      <div class="hub-bar">
        <ButtonForm action="/me/sign-out" formToken={tokens.signOut} label={i18n.t('hub.signOut')} />
      </div>
      <ErrorSummary i18n={i18n} errors={errors} />
      {props.done ? (
        <div class="hub-status" role="status">
          <p>{i18n.t(`hub.done.${props.done}`)}</p>
        </div>
      ) : null}
      <p>{i18n.t('hub.intro', { workspace: props.from })}</p>

      <section class="hub-section" aria-labelledby="studies-title">
        <h2 id="studies-title">{i18n.t('hub.studies.title')}</h2>
        {props.studies.length === 0 ? (
          <p>{i18n.t('hub.studies.none')}</p>
        ) : (
          <ul class="hub-list">
            {props.studies.map((study) => (
              <li>
                <span class="hub-item-title">{study.studyName}</span>
                <span>{i18n.t('hub.studies.state', { state: study.state })}</span>
                {study.messagesStopped || props.optedOut ? (
                  <p>{i18n.t('hub.studies.stopped', { study: study.studyName })}</p>
                ) : (
                  <ButtonForm action={`/me/studies/${study.participantId}/stop-messages`} formToken={tokens.stop} label={i18n.t('hub.studies.stop', { study: study.studyName })} />
                )}
              </li>
            ))}
          </ul>
        )}
      </section>

      <SessionsSection i18n={i18n} sessions={props.sessions} manageToken={tokens.manage} />

      <section class="hub-section" aria-labelledby="consents-title">
        <h2 id="consents-title">{i18n.t('hub.consents.title')}</h2>
        {props.consents.length === 0 ? (
          <p>{i18n.t('hub.consents.none')}</p>
        ) : (
          <ul class="hub-list">
            {props.consents.map((consent) => {
              const study = consent.studyName ?? '';
              const kind = consent.studyName === null ? 'form' : 'study';
              return (
                <li>
                  <span class="hub-item-title">{i18n.t('hub.consents.item', { kind, study, date: new Date(consent.givenAt) })}</span>
                  {consent.withdrawnAt ? <p>{i18n.t('hub.consents.withdrawnOn', { date: new Date(consent.withdrawnAt) })}</p> : null}
                  {consent.hasCopy ? (
                    <p>
                      <a href={`/me/consents/${consent.consentId}/copy.pdf`} download>
                        {i18n.t('hub.consents.download', { kind, study, date: new Date(consent.givenAt) })}
                      </a>
                    </p>
                  ) : null}
                  {consent.canWithdraw && consent.withdrawnAt === null ? (
                    <ButtonForm action={`/me/consents/${consent.consentId}/withdraw`} formToken={tokens.withdraw} label={i18n.t('hub.consents.withdraw', { study })} />
                  ) : null}
                </li>
              );
            })}
          </ul>
        )}
      </section>

      <section class="hub-section" aria-labelledby="details-title">
        <h2 id="details-title">{i18n.t('hub.profile.title')}</h2>
        {props.profile.length === 0 ? (
          <p>{i18n.t('hub.profile.none')}</p>
        ) : (
          <form method="post" action="/me/details" novalidate>
            <input type="hidden" name="formToken" value={tokens.details} />
            {props.profile.map((field) => (
              <ProfileControl i18n={i18n} field={field} />
            ))}
            <button type="submit" class="primary">
              {i18n.t('hub.profile.save')}
            </button>
          </form>
        )}
      </section>

      <section class="hub-section" aria-labelledby="messages-title">
        <h2 id="messages-title">{i18n.t('hub.contact.title')}</h2>
        {props.optedOut ? (
          <p>{i18n.t('hub.contact.stoppedAll', { workspace: props.from })}</p>
        ) : (
          <>
            <p>{i18n.t('hub.contact.body', { workspace: props.from })}</p>
            <ButtonForm action="/me/messages/stop" formToken={tokens.stopAll} label={i18n.t('hub.contact.stopAll')} />
          </>
        )}
      </section>

      <section class="hub-section" aria-labelledby="data-title">
        <h2 id="data-title">{i18n.t('hub.data.title')}</h2>
        <p>{i18n.t('hub.data.body', { workspace: props.from })}</p>
        <p>
          <a href="/me/data.json" download>
            {i18n.t('hub.data.download')}
          </a>
        </p>
      </section>

      <section class="hub-section" aria-labelledby="erase-title">
        <h2 id="erase-title">{i18n.t('hub.erase.title')}</h2>
        <p>{i18n.t('hub.erase.body')}</p>
        <p>
          <a href="/me/erase">{i18n.t('hub.erase.start')}</a>
        </p>
      </section>
    </Page>
  );
}

export function EraseConfirmPage(props: { i18n: Translator; from: string; formToken: string }) {
  const { i18n } = props;
  return (
    <Page i18n={i18n} title={i18n.t('hub.erase.confirm.title')} from={props.from} privacy={privacyOf(i18n)}>
      <p>{i18n.t('hub.erase.body')}</p>
      <ButtonForm action="/me/erase" formToken={props.formToken} label={i18n.t('hub.erase.confirm.button')} kind="warning" />
      <p>
        <a href="/me">{i18n.t('hub.erase.cancel')}</a>
      </p>
    </Page>
  );
}

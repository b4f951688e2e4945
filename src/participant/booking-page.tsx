import { renderToString } from 'preact-render-to-string';
import type { Translator } from './i18n.js';
import { ErrorSummary, type FieldError, Page } from './layout.js';

/** One open time as the page offers it: its instant (the radio's value), its time in the person's zone, and the host's own. */
export interface SlotOption {
  startTime: string;
  time: string;
  /** "15:00 for the host, Berlin". */
  hostTime: string;
}

/** A day of open times, in the person's zone. */
export interface DayOfSlots {
  label: string;
  slots: SlotOption[];
}

/** The time zones of the <select>, grouped by their IANA region. */
export interface ZoneGroup {
  region: string;
  zones: { value: string; label: string }[];
}

function ZoneOptions(props: { groups: ZoneGroup[] }) {
  return (
    <>
      {props.groups.map((group) =>
        group.region === '' ? (
          group.zones.map((zone) => <option value={zone.value}>{zone.label}</option>)
        ) : (
          <optgroup label={group.region}>
            {group.zones.map((zone) => (
              <option value={zone.value}>{zone.label}</option>
            ))}
          </optgroup>
        ),
      )}
    </>
  );
}

/**
 * The zone select's options, rendered once per list of zones (the same list on nearly every page)
 * and the chosen one marked in the copy: about 430 options, the largest part of the page, which
 * cost a fair share of each page's rendering when made afresh.
 */
const renderedZoneOptions = new WeakMap<ZoneGroup[], string>();
export function zoneOptionsHtml(groups: ZoneGroup[], selected: string): string {
  let html = renderedZoneOptions.get(groups);
  if (html === undefined) {
    html = renderToString(<ZoneOptions groups={groups} />);
    renderedZoneOptions.set(groups, html);
  }
  // Zone names are letters, digits, '/', '_', '+' and '-': nothing to escape, and the value is found as written.
  return html.replace(`<option value="${selected}">`, `<option value="${selected}" selected>`);
}

export interface BookingPageProps {
  i18n: Translator;
  from: string;
  title: string;
  /** The session's length, for the introduction. */
  minutes: number;
  /** The zone the times are shown in: its IANA name (the select's value) and its label ("Asia/Kathmandu, GMT+5:45"). */
  zone: { value: string; label: string };
  zones: ZoneGroup[];
  /** The page's own path (the zone form's GET action) and the first day shown (kept when the zone changes). */
  pagePath: string;
  fromDay: string;
  /** "Open times from 4 January to 10 January". */
  weekLabel: string;
  days: DayOfSlots[];
  /** True when the study has no open time at all (not only in these days). */
  noneAtAll: boolean;
  noneText: string;
  earlierHref?: string | undefined;
  laterHref?: string | undefined;
  /** Where the chosen time is posted, with its anti-forgery token. */
  action: string;
  formToken: string;
  submitLabel: string;
  /** The booking being moved, as the person reads it. */
  currentWhen?: string | undefined;
  /** Why the page came back: the time was taken meanwhile, or none was chosen. */
  error?: 'taken' | 'choose' | undefined;
  /** The script that fills ?tz= from the browser's zone (progressive enhancement), when the zone shown is only a guess. */
  zoneScript?: string | undefined;
}

export const slotControlId = (index: number) => `slot-${index}`;

/**
 * The open times of a study, a week at a time, grouped by day in the person's time zone: a radio
 * per time, labelled by the time in that zone and, beside it, the host's own time. The zone is a
 * <select> in a form of its own (GET), so the page works without any script.
 */
export function BookingPage(props: BookingPageProps) {
  const { i18n } = props;
  const errorMessage = props.error === 'taken' ? i18n.t('booking.errors.taken') : props.error === 'choose' ? i18n.t('booking.errors.choose') : undefined;
  const summary: FieldError[] = errorMessage ? [{ fieldId: props.days.length > 0 ? slotControlId(0) : 'tz', field: i18n.t('booking.times.legend'), message: errorMessage }] : [];
  let index = 0;
  return (
    <Page i18n={i18n} title={props.title} from={props.from}>
      <ErrorSummary i18n={i18n} errors={summary} />
      {props.currentWhen ? <p>{i18n.t('booking.move.current', { when: props.currentWhen })}</p> : null}
      <p>{i18n.t('booking.intro', { minutes: props.minutes })}</p>
      <p class="notice" id="zone-shown">
        {i18n.t('booking.zone.shown', { zone: props.zone.label })}
      </p>
      <form method="get" action={props.pagePath} class="zone-form">
        <input type="hidden" name="from" value={props.fromDay} />
        <div class="question">
          <label for="tz">{i18n.t('booking.zone.label')}</label>
          <span class="hint" id="tz-hint">
            {i18n.t('booking.zone.hint')}
          </span>
          <select id="tz" name="tz" aria-describedby="tz-hint" autocomplete="off" dangerouslySetInnerHTML={{ __html: zoneOptionsHtml(props.zones, props.zone.value) }} />
        </div>
        <button type="submit" class="secondary">
          {i18n.t('booking.zone.submit')}
        </button>
      </form>
      {props.noneAtAll ? (
        <p>{props.noneText}</p>
      ) : (
        <form method="post" action={props.action} novalidate>
          <input type="hidden" name="formToken" value={props.formToken} />
          <input type="hidden" name="tz" value={props.zone.value} />
          <fieldset class={errorMessage ? 'question has-error' : 'question'} aria-describedby={errorMessage ? 'slot-error' : undefined}>
            <legend>
              <h2 class="legend-heading">{i18n.t('booking.times.legend')}</h2>
            </legend>
            <p class="hint">{props.weekLabel}</p>
            {errorMessage ? (
              <span class="error-message" id="slot-error">
                <span class="visually-hidden">{i18n.t('errors.summaryTitle')}: </span>
                {errorMessage}
              </span>
            ) : null}
            {props.days.length === 0 ? <p>{i18n.t('booking.week.none')}</p> : null}
            {props.days.map((day) => (
              <fieldset class="day">
                <legend>{day.label}</legend>
                {day.slots.map((slot) => {
                  const id = slotControlId(index++);
                  return (
                    <div class="choice">
                      <input type="radio" id={id} name="startTime" value={slot.startTime} required />
                      <label for={id}>
                        <span class="slot-time">{slot.time}</span>
                        <span class="hint">{slot.hostTime}</span>
                      </label>
                    </div>
                  );
                })}
              </fieldset>
            ))}
          </fieldset>
          {props.earlierHref || props.laterHref ? (
            <nav class="pages" aria-label={i18n.t('booking.pages.label')}>
              {props.earlierHref ? <a href={props.earlierHref}>{i18n.t('booking.earlier')}</a> : null}
              {props.laterHref ? <a href={props.laterHref}>{i18n.t('booking.later')}</a> : null}
            </nav>
          ) : null}
          {props.days.length > 0 ? (
            <button type="submit" class="primary">
              {props.submitLabel}
            </button>
          ) : null}
        </form>
      )}
      {props.zoneScript ? <script src={props.zoneScript} defer /> : null}
    </Page>
  );
}

export interface BookedPageProps {
  i18n: Translator;
  from: string;
  study: string;
  /** The session in the person's zone ("Monday 4 January 2027, 4:45 – 5:30 PM (Asia/Kathmandu, GMT+5:45)"). */
  when: string;
  /** The session's start for the host ("11:00 AM, Berlin"). */
  hostWhen: string;
  calendarHref: string;
  /** The links to change or cancel, when the person may still do it online. */
  changeHref?: string | undefined;
  cancelHref?: string | undefined;
}

/** The person's booked session: when, in their zone and the host's, a calendar file, and the ways to change or cancel it while the window is open. */
export function BookedPage(props: BookedPageProps) {
  const { i18n } = props;
  return (
    <Page i18n={i18n} title={i18n.t('booking.booked.title')} from={props.from}>
      <p>{i18n.t('booking.booked.body', { study: props.study })}</p>
      <dl class="summary">
        <div>
          <dt>{i18n.t('booking.booked.when')}</dt>
          <dd>{props.when}</dd>
        </div>
        <div>
          <dt>{i18n.t('booking.booked.host')}</dt>
          <dd>{props.hostWhen}</dd>
        </div>
      </dl>
      <p>
        <a href={props.calendarHref} download="session.ics">
          {i18n.t('booking.calendar')}
        </a>
      </p>
      {props.changeHref && props.cancelHref ? (
        <ul class="actions">
          <li>
            <a href={props.changeHref}>{i18n.t('booking.change')}</a>
          </li>
          <li>
            <a href={props.cancelHref}>{i18n.t('booking.cancel')}</a>
          </li>
        </ul>
      ) : (
        <p>{i18n.t('booking.locked')}</p>
      )}
    </Page>
  );
}

export const reasonControlId = 'cancel-reason';
export const REASON_MAX = 1000;

export interface CancelPageProps {
  i18n: Translator;
  from: string;
  study: string;
  when: string;
  action: string;
  formToken: string;
  keepHref: string;
  reason?: string | undefined;
  error?: string | undefined;
}

/** The confirmation before a cancellation: the session's time, an optional reason, and a way back. */
export function CancelPage(props: CancelPageProps) {
  const { i18n } = props;
  const summary: FieldError[] = props.error ? [{ fieldId: reasonControlId, field: i18n.t('booking.cancel.reason'), message: props.error }] : [];
  const describedBy = ['cancel-reason-hint', props.error ? 'cancel-reason-error' : ''].filter(Boolean).join(' ');
  return (
    <Page i18n={i18n} title={i18n.t('booking.cancel.title')} from={props.from}>
      <ErrorSummary i18n={i18n} errors={summary} />
      <p>{i18n.t('booking.cancel.body', { study: props.study, when: props.when })}</p>
      <form method="post" action={props.action} novalidate>
        <input type="hidden" name="formToken" value={props.formToken} />
        <div class={props.error ? 'question has-error' : 'question'}>
          <label for={reasonControlId}>{i18n.t('booking.cancel.reason')}</label>
          <span class="hint" id="cancel-reason-hint">
            {i18n.t('booking.cancel.reasonHint')}
          </span>
          {props.error ? (
            <span class="error-message" id="cancel-reason-error">
              <span class="visually-hidden">{i18n.t('errors.summaryTitle')}: </span>
              {props.error}
            </span>
          ) : null}
          <textarea id={reasonControlId} name="reason" rows={4} maxLength={REASON_MAX} aria-describedby={describedBy} aria-invalid={props.error ? 'true' : undefined}>
            {props.reason ?? ''}
          </textarea>
        </div>
        <div class="button-group">
          <button type="submit" class="primary">
            {i18n.t('booking.cancel.submit')}
          </button>
          <a href={props.keepHref}>{i18n.t('booking.cancel.keep')}</a>
        </div>
      </form>
    </Page>
  );
}

import { type RawBuilder, sql } from 'kysely';
import type { CompileContext, Membership, PropertyDefinition } from '../../search/catalogue.js';
import { at, DAY_MS, enumOptions, named } from '../../search/sql.js';
import { paidIncentive } from '../incentives/search-names.js';

/**
 * The PERSON names derived from what the service records about a person beyond the people row:
 * their participations (every study's participants rows are the participation history), the
 * contacts among participant status events, incentives, consent and signup submissions. Each is
 * defined once, here, as SQL over `people as p`, and described once for the OpenAPI document.
 *
 * Windows (`_L30`, `_L90`, `_L365`, "last year") are the last N×24 hours up to the service clock's
 * now, both ends included; "last calendar year" is the previous UTC calendar year.
 */

type Kind = 'INTERVIEW' | 'UNMODERATED_TEST' | 'SURVEY';

const derived = named('PERSON');

/**
 * Names read from the person's participants rows alone, and not of the time: the search change
 * log names the person for every write of those rows, so the counts may hold them.
 */
const fromParticipations = { countedFrom: 'person' } as const;

/**
 * Names read from the person's consent submissions alone: the search change log names the person
 * for every write of those rows too (triggers of migration 20261128100000), so the counts may hold them.
 */
const fromConsents = { countedFrom: 'person' } as const;

/** `column` within the last `days` days by the service clock, or always when no window is given. */
function within(column: RawBuilder<unknown>, ctx: CompileContext, days: number | undefined): RawBuilder<unknown> {
  if (days === undefined) return sql`true`;
  return sql`${column} >= ${at(new Date(ctx.now.getTime() - days * DAY_MS))} and ${column} <= ${at(ctx.now)}`;
}

/**
 * The people of the workspace with a row of `table` (as `alias`) that meets `where`: the people a
 * name read from those rows can tell apart from the empty value (PropertyDefinition.presence).
 */
const personsWith = (table: string, alias: string, where: RawBuilder<unknown> = sql`true`) => (ctx: CompileContext) =>
  sql`select ${sql.ref(`${alias}.person_id`)} from ${sql.table(table)} as ${sql.raw(alias)} where ${sql.ref(`${alias}.workspace_id`)} = ${ctx.workspaceId} and ${where}`;

const participations = (where?: RawBuilder<unknown>, empty: null | 0 = 0): Partial<PropertyDefinition> => ({ presence: { persons: personsWith('participants', 'h', where), empty } });
const completions = (kind: Kind, empty: null | 0) => participations(sql`h.study_kind = ${sql.lit(kind)} and h.completed_at is not null`, empty);
const submissions = (where?: RawBuilder<unknown>): Partial<PropertyDefinition> => ({ presence: { persons: personsWith('signup_submissions', 'ss', where), empty: null } });
const withReferralCode = submissions(sql`ss.referral_code is not null`);

const ofPerson = (alias: string) => sql`${sql.ref(`${alias}.workspace_id`)} = p.workspace_id and ${sql.ref(`${alias}.person_id`)} = p.person_id`;

const completedCount = (kind: Kind, days?: number) => (ctx: CompileContext) =>
  sql`(select count(*) from participants as h where ${ofPerson('h')} and h.study_kind = ${sql.lit(kind)} and h.completed_at is not null and ${within(sql`h.completed_at`, ctx, days)})`;

const lastCompleted = (kind: Kind) => () =>
  sql`(select max(h.completed_at) from participants as h where ${ofPerson('h')} and h.study_kind = ${sql.lit(kind)} and h.completed_at is not null)`;

/** The instants of a person's participations, as the counts hold them (see PropertyDefinition.countedWithin). */
const instantsOf = (column: string, kind?: Kind) => () =>
  sql`(select coalesce(json_agg(cast(extract(epoch from ${sql.ref(`h.${column}`)}) * 1000000 as text)), '[]') from participants as h
    where ${ofPerson('h')} ${kind === undefined ? sql`` : sql`and h.study_kind = ${sql.lit(kind)}`} and ${sql.ref(`h.${column}`)} is not null)`;

const invitedCount = (days?: number) => (ctx: CompileContext) =>
  sql`(select count(*) from participants as h where ${ofPerson('h')} and h.invited_at is not null and ${within(sql`h.invited_at`, ctx, days)})`;

/**
 * Contacts: each move that reaches out (a participant status event with is_contact), and each
 * message delivered on its own (a message sent with a move is that move's contact, not a second).
 */
const contactCount = (days?: number) => (ctx: CompileContext) =>
  sql`((select count(*) from participant_status_events as e where ${ofPerson('e')} and e.is_contact and ${within(sql`e.occurred_at`, ctx, days)})
    + (select count(*) from messages as m where ${ofPerson('m')} and m.counts_as_contact and m.status = 'SENT' and ${within(sql`m.sent_at`, ctx, days)}))`;

const paidIncentives: Partial<PropertyDefinition> = { presence: { persons: personsWith('incentives', 'x', paidIncentive), empty: 0 } };

const sentTotal = (window: (ctx: CompileContext) => RawBuilder<unknown>) => (ctx: CompileContext) =>
  sql`(select coalesce(sum(x.amount_cents), 0) from incentives as x where ${ofPerson('x')} and ${paidIncentive} and ${window(ctx)})`;

function lastCalendarYear(ctx: CompileContext) {
  const year = ctx.now.getUTCFullYear();
  return sql`x.sent_at >= ${at(new Date(Date.UTC(year - 1, 0, 1)))} and x.sent_at < ${at(new Date(Date.UTC(year, 0, 1)))}`;
}

const noShows = sql`(select coalesce(sum(h.no_show_count), 0) from participants as h where ${ofPerson('h')} and h.study_kind = 'INTERVIEW' and h.no_show_count > 0)`;
const interviewsCompleted = sql`(select count(*) from participants as h where ${ofPerson('h')} and h.study_kind = 'INTERVIEW' and h.completed_at is not null)`;

const studyMembership: Membership = {
  ids: () => sql`select h.study_id from participants as h where ${ofPerson('h')}`,
  check: {
    resource: 'Study',
    async existing(db, workspaceId, ids) {
      if (ids.length === 0) return new Set();
      const rows = await db.selectFrom('studies').where('workspace_id', '=', workspaceId).where('study_id', 'in', ids).select('study_id').execute();
      return new Set(rows.map((row) => row.study_id));
    },
  },
};

const referralCodes: Membership = {
  ids: () => sql`select distinct ss.referral_code from signup_submissions as ss where ${ofPerson('ss')} and ss.referral_code is not null`,
};

const latestSubmission = (column: string) => () =>
  sql`(select ${sql.ref(`ss.${column}`)} from signup_submissions as ss where ${ofPerson('ss')} order by ss.submitted_at desc, ss.submission_id desc limit 1)`;

const referralCode = (order: 'asc' | 'desc') => () =>
  sql`(select ss.referral_code from signup_submissions as ss where ${ofPerson('ss')} and ss.referral_code is not null order by ss.submitted_at ${sql.raw(order)}, ss.submission_id ${sql.raw(order)} limit 1)`;

const windows = [
  ['', undefined],
  ['_L30', 30],
  ['_L90', 90],
  ['_L365', 365],
] as const;

const kinds: [Kind, string, string][] = [
  ['INTERVIEW', 'INTERVIEWS', 'interviews (studies of type INTERVIEWS or GROUP_INTERVIEW)'],
  ['UNMODERATED_TEST', 'UNMOD_TESTS', 'unmoderated tests'],
  ['SURVEY', 'SURVEYS', 'surveys'],
];

/**
 * A count and its windows. With `instants` (counts of participations, whose rows the search change
 * log names the person for) the counts hold them: the whole count per person, each window by the
 * instants within it at the search's now.
 */
function windowed(
  prefix: string,
  meaning: (window: string) => string,
  value: (days?: number) => (ctx: CompileContext) => RawBuilder<unknown>,
  instants?: (ctx: CompileContext) => RawBuilder<unknown>,
  presence?: Partial<PropertyDefinition>,
): Record<string, PropertyDefinition> {
  const held = (days: number | undefined): Partial<PropertyDefinition> => {
    if (!instants) return {};
    return days === undefined ? { countedFrom: 'person' } : { countedWithin: { key: prefix, instants, days } };
  };
  return Object.fromEntries(
    windows.map(([suffix, days]) => [
      `${prefix}${suffix}`,
      derived(`${prefix}${suffix}`, 'number', meaning(days === undefined ? '' : ` in the last ${days} days`), value(days), { notNull: true, ...held(days), ...presence }),
    ]),
  );
}

export const historyNames: Record<string, PropertyDefinition> = {
  LAST_CONTACT_DATE: derived('LAST_CONTACT_DATE', 'datetime', 'when the person was last contacted: invited to a study, sent a screener, or sent a message (when the mail server accepted it)', () => sql`p.last_contact_at`, {
    countedFrom: 'person',
    storedSortKeys: { ASC: () => sql`p.last_contact_key_asc`, DESC: () => sql`p.last_contact_key_desc` },
    // people_by_last_contact_asc / _desc (20261130000000_stored_sort_keys)
    indexedOrder: true,
  }),
  STUDY_MEMBERSHIP: derived('STUDY_MEMBERSHIP', 'membership', 'the studies the person is a participant of (study ids; sorts by their number)', (ctx) => sql`(select count(*) from (${studyMembership.ids(ctx)}) as s)`, {
    membership: studyMembership,
    notNull: true,
    countedFrom: 'person',
    ...participations(undefined, null),
  }),
  ...windowed('INVITED_TO_STUDY', (window) => `the number of studies the person was invited to${window} (by the time of the first invitation)`, invitedCount, instantsOf('invited_at'), participations(sql`h.invited_at is not null`)),
  TOTAL_SENT_LAST_YEAR: derived('TOTAL_SENT_LAST_YEAR', 'number', 'incentives sent to the person in the last 365 days, in USD cents (statuses UNCLAIMED, CLAIMED, SENT; other currencies are not added)', sentTotal((ctx) => within(sql`x.sent_at`, ctx, 365)), { notNull: true, ...paidIncentives }),
  TOTAL_SENT_LAST_CALENDAR_YEAR: derived('TOTAL_SENT_LAST_CALENDAR_YEAR', 'number', 'incentives sent to the person in the previous UTC calendar year, in USD cents (statuses UNCLAIMED, CLAIMED, SENT; other currencies are not added)', sentTotal(lastCalendarYear), {
    notNull: true,
    ...paidIncentives,
  }),
  TOTAL_SENT_ALL_TIME: derived('TOTAL_SENT_ALL_TIME', 'number', 'incentives ever sent to the person, in USD cents (statuses UNCLAIMED, CLAIMED, SENT; other currencies are not added)', sentTotal(() => sql`true`), { notNull: true, ...paidIncentives }),
  ...windowed('TOTAL_NUMBER_OF_CONTACT', (window) => `the number of times the person was contacted${window}: each invitation to a study, each screener sent, and each message delivered (a message sent with an invitation or screener is that contact, not a second)`, contactCount, undefined, {
    presence: {
      persons: (ctx) => sql`${personsWith('participant_status_events', 'e', sql`e.is_contact`)(ctx)} union all ${personsWith('messages', 'm', sql`m.counts_as_contact and m.status = 'SENT'`)(ctx)}`,
      empty: 0,
    },
  }),
  ...Object.fromEntries(
    kinds.flatMap(([kind, plural, described]) => {
      const lastName = kind === 'INTERVIEW' ? 'LAST_INTERVIEW_DATE' : kind === 'SURVEY' ? 'LAST_SURVEY_DATE' : 'LAST_UNMOD_TEST_DATE';
      return [
        [lastName, derived(lastName, 'datetime', `when the person last completed one of the ${described}`, lastCompleted(kind), { ...fromParticipations, ...completions(kind, null) })],
        ...Object.entries(
          windowed(`TOTAL_NUMBER_OF_${plural}_COMPLETED`, (window) => `the number of ${described} the person completed${window}`, (days) => completedCount(kind, days), instantsOf('completed_at', kind), completions(kind, 0)),
        ),
      ];
    }),
  ),
  TOTAL_NUMBER_OF_NO_SHOW_INTERVIEWS: derived('TOTAL_NUMBER_OF_NO_SHOW_INTERVIEWS', 'number', 'the number of booked interview sessions the person missed (every move to NO_SHOW counts)', () => noShows, { notNull: true, ...fromParticipations, ...participations(sql`h.study_kind = 'INTERVIEW' and h.no_show_count > 0`) }),
  SHOW_RATE: derived(
    'SHOW_RATE',
    'number',
    'interviews completed ÷ (interviews completed + interview no-shows), from 0 to 1; empty when the person has neither',
    () => sql`(select case when s.completed + s.missed = 0 then null else round(cast(s.completed as numeric) / (s.completed + s.missed), 4) end from (select ${interviewsCompleted} as completed, ${noShows} as missed) as s)`,
    { ...fromParticipations, ...participations(sql`h.study_kind = 'INTERVIEW' and (h.completed_at is not null or h.no_show_count > 0)`, null) },
  ),
  PARTICIPANT_RATING: derived('PARTICIPANT_RATING', 'number', "the average of the ratings (1–5) the person's participations received; empty when none", () =>
    sql`(select round(avg(h.rating), 2) from participants as h where ${ofPerson('h')} and h.rating is not null)`,
  { ...fromParticipations, ...participations(sql`h.rating is not null`, null) }),
  TOTAL_RATINGS: derived('TOTAL_RATINGS', 'number', "the number of the person's participations that were rated", () => sql`(select count(*) from participants as h where ${ofPerson('h')} and h.rating is not null)`, {
    notNull: true,
    ...fromParticipations,
    ...participations(sql`h.rating is not null`),
  }),
  CONSENT_SUBMISSIONS: derived('CONSENT_SUBMISSIONS', 'number', 'the number of consent submissions the person made (on signup forms or for studies)', () =>
    sql`(select count(*) from consent_submissions as c where ${ofPerson('c')})`,
  { notNull: true, ...fromConsents, presence: { persons: personsWith('consent_submissions', 'c'), empty: 0 } }),
  CONSENT_FORM_WAS_SUBMITTED: derived('CONSENT_FORM_WAS_SUBMITTED', 'boolean', 'whether the person ever submitted a consent form (on a signup form or for a study)', () => sql`exists (select 1 from consent_submissions as c where ${ofPerson('c')})`, {
    notNull: true,
    ...fromConsents,
  }),
  SCREENER_STATUS: derived(
    'SCREENER_STATUS',
    'enum',
    "the screener state of the person's latest screener (of any study): SCREENER_SENT, SUBMITTED, QUALIFIED or DISQUALIFIED; empty when none was sent",
    () =>
      sql`(select h.screener_state from participants as h where ${ofPerson('h')} and h.screener_state <> 'NOT_SENT' order by coalesce(h.screener_submitted_at, h.screener_sent_at) desc nulls last, h.participant_id desc limit 1)`,
    { options: enumOptions(['SCREENER_SENT', 'SUBMITTED', 'QUALIFIED', 'DISQUALIFIED']), ...fromParticipations, ...participations(sql`h.screener_state <> 'NOT_SENT'`, null) },
  ),
  SCREENER_SUBMITTED_AT: derived('SCREENER_SUBMITTED_AT', 'datetime', 'when the person last answered a screener (of any study)', () =>
    sql`(select max(h.screener_submitted_at) from participants as h where ${ofPerson('h')})`,
  { ...fromParticipations, ...participations(sql`h.screener_submitted_at is not null`, null) }),
  SIGNUP_REFERRAL_CODES: derived('SIGNUP_REFERRAL_CODES', 'membership', "the referral codes of the person's signup submissions (sorts by the number of distinct codes)", (ctx) => sql`(select count(*) from (${referralCodes.ids(ctx)}) as s)`, {
    membership: referralCodes,
    notNull: true,
    ...withReferralCode,
  }),
  FORM_SIGNEDUP_AT: derived('FORM_SIGNEDUP_AT', 'datetime', "when the person's latest signup submission was made", () => sql`(select max(ss.submitted_at) from signup_submissions as ss where ${ofPerson('ss')})`, submissions()),
  FORM_APPROVAL_STATUS: derived('FORM_APPROVAL_STATUS', 'enum', "the approval status of the person's latest signup submission", latestSubmission('approval_status'), {
    options: enumOptions(['PENDING_REVIEW', 'APPROVED', 'REJECTED']),
    ...submissions(),
  }),
  FORM_FIRST_SIGNUP_REFERRAL_CODE: derived('FORM_FIRST_SIGNUP_REFERRAL_CODE', 'text', 'the referral code of the earliest signup submission that had one', referralCode('asc'), withReferralCode),
  FORM_LAST_SIGNUP_REFERRAL_CODE: derived('FORM_LAST_SIGNUP_REFERRAL_CODE', 'text', 'the referral code of the latest signup submission that had one', referralCode('desc'), withReferralCode),
};

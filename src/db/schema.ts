import type { ColumnType, Generated, GeneratedAlways, Insertable, Selectable, Updateable } from 'kysely';

/** Timestamps are read as ISO 8601 strings (see the type parsers in database.ts). */
type Timestamp = ColumnType<string, string, string>;
type Json<T> = ColumnType<T, string, string>;
type NullableJson<T> = ColumnType<T | null, string | null, string | null>;

export interface ServiceSecretsTable {
  name: string;
  value: string;
  created_at: ColumnType<string, string | undefined, never>;
}

export interface WorkspacesTable {
  workspace_id: string;
  name: string;
  slug: string;
  created_at: Timestamp;
}

export interface UsersTable {
  workspace_id: string;
  user_id: string;
  email_account_id: string;
  email: string;
  fullname: string;
  job_role: ColumnType<string, string | undefined, string>;
  profile_pic: ColumnType<string, string | undefined, string>;
  status: 'INVITED' | 'ACTIVE' | 'DEACTIVATED';
  seat: 'SERVICE' | 'RESEARCHER_FREE' | 'RESEARCHER_PAID' | 'LITE' | null;
  role: 'DEVELOPER' | 'OBSERVER' | 'RESEARCHER' | 'OPS_MANAGER' | 'SUPER_ADMIN' | 'CUSTOM' | 'COLLABORATOR';
  /** The custom role of a CUSTOM user (required then), null for every other role. */
  custom_role_id: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface TeamsTable {
  workspace_id: string;
  team_id: string;
  name: string;
  created_at: Timestamp;
}

export interface TeamMembersTable {
  workspace_id: string;
  team_id: string;
  user_id: string;
}

export interface ApiTokensTable {
  workspace_id: string;
  token_id: string;
  user_id: string;
  token_digest: string;
  can_read_personal_data: boolean;
  can_read_screeners: boolean;
  created_at: Timestamp;
  revoked_at: Timestamp | null;
  name: ColumnType<string, string | undefined, string>;
  /** The rights the key is limited to; null: all of its user's (CLI-made tokens). */
  rights: ColumnType<string[] | null, string[] | null | undefined, string[] | null>;
  expires_at: ColumnType<string | null, string | null | undefined, string | null>;
  last_used_at: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface CustomRolesTable {
  workspace_id: string;
  custom_role_id: string;
  name: string;
  rights: string[];
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PopulationsTable {
  workspace_id: string;
  population_id: string;
  name: string;
  description: ColumnType<string, string | undefined, string>;
  created_at: Timestamp;
}

export type StudyType = 'SURVEY' | 'INTERVIEWS' | 'UNMODERATED_TEST' | 'GROUP_INTERVIEW';
export type StudyStatus = 'DRAFT' | 'ACTIVE' | 'PAUSED' | 'CLOSED';
export type RecruitmentStrategy = 'IN_SERVICE' | 'EXTERNAL';
export type PanelProvider = 'PROVIDER_ONE' | 'PROVIDER_TWO';

/** The study plan as stored: the StudyPlan of the reference, with input-only incentive fields. */
export interface StoredStudyPlan {
  name?: string;
  externalName?: string;
  description?: string;
  externalDescription?: string;
  startDate?: string;
  endDate?: string;
  researchPlanUrl?: string;
  participationLimit?: number;
  consentFormId?: string;
  /** The participant's page asks for consent before the screener's questions (default: after a qualifying answer). */
  consentBeforeScreener?: boolean;
  incentive?: {
    incentiveBudgetId?: string;
    amount?: number;
    customIncentiveId?: string;
    defaultCustomIncentiveValue?: string;
  };
  includeScreener?: boolean;
  brandingConfigId?: string;
  language?: string;
  scheduler?: { interviewDurationMinutes?: number };
}

export interface StudiesTable {
  workspace_id: string;
  study_id: string;
  study_type: StudyType;
  recruitment_strategy: RecruitmentStrategy;
  recruitment_panel_provider: PanelProvider | null;
  status: StudyStatus;
  plan: Json<StoredStudyPlan>;
  created_from_template_id: string | null;
  team_id: string | null;
  population_id: string | null;
  created_by_user_id: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** The backfill that made this study (src/families/backfills/), and its key in the tool it came from. */
  backfill_id: ColumnType<string | null, string | null | undefined, never>;
  backfill_key: ColumnType<string | null, string | null | undefined, never>;
}

export interface StudyOwnersTable {
  workspace_id: string;
  study_id: string;
  user_id: string;
  position: number;
}

export interface TemplateScreener {
  type: ScreenerType;
  showSchedulerToQualified: boolean;
  qualifyByDefault: boolean;
  questions: ScreenerQuestionInput[];
}

export interface StudyTemplatesTable {
  workspace_id: string;
  study_template_id: string;
  name: string;
  study_type: StudyType;
  recruitment_strategy: RecruitmentStrategy;
  recruitment_panel_provider: PanelProvider | null;
  plan: Json<StoredStudyPlan>;
  screener: Json<TemplateScreener | null>;
  created_from_study_id: string | null;
  created_by_user_id: string;
  created_at: Timestamp;
}

export type ScreenerType = 'SERVICE' | 'EXTERNAL_SURVEY';

export interface ScreenersTable {
  workspace_id: string;
  screener_id: string;
  study_id: string;
  type: ScreenerType;
  show_scheduler_to_qualified: boolean;
  qualify_by_default: boolean;
  external_survey_id: string | null;
  survey_platform_collector_id: string | null;
  external_survey_setup_status: string | null;
  external_survey_setup_error_code: string | null;
  external_survey_setup_updated_at: Timestamp | null;
  custom_link_url: string | null;
  custom_link_tokens_json: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  current_revision: ColumnType<number, number | undefined, number>;
}

/** What a choice or a number range does to the outcome of a screener. */
export type ScreenerRule = 'QUALIFIES' | 'DISQUALIFIES' | 'NEUTRAL';

export interface ScreenerChoice {
  id: string;
  label: string;
  rule: ScreenerRule;
}

/** Bounds are inclusive; a missing bound is open. */
export interface NumberRange {
  min?: number;
  max?: number;
}

export interface ScreenerNumberRules {
  minimum?: number;
  maximum?: number;
  integer: boolean;
  ranges: (NumberRange & { rule: ScreenerRule })[];
}

/** A question is shown only when the earlier question `questionKey` was answered with one of `choiceIds`, or a number in `range`. */
export type ScreenerShowWhen = { questionKey: string; choiceIds: string[] } | { questionKey: string; range: NumberRange };

export interface ScreenerQuestionInput {
  key: string;
  name: string;
  type: string;
  category: string;
  isRequired: boolean;
  description?: string;
  mappedToPropertyId?: string;
  questionTemplateId?: string;
  choices?: ScreenerChoice[];
  numberRules?: ScreenerNumberRules;
  showWhen?: ScreenerShowWhen;
}

export interface ScreenerQuestionsTable {
  workspace_id: string;
  question_id: string;
  screener_id: string;
  position: number;
  category: string;
  type: string;
  name: string;
  is_required: boolean;
  description: string | null;
  mapped_to_property_id: string | null;
  question_template_id: string | null;
  /** The screener's revision this version belongs to (rows are never updated; see the screener_definition migration). */
  revision: number;
  question_key: string;
  choices: NullableJson<ScreenerChoice[]>;
  number_rules: NullableJson<ScreenerNumberRules>;
  show_when: NullableJson<ScreenerShowWhen>;
}

export interface ScreenerAnswersTable {
  workspace_id: string;
  participant_id: string;
  /** The question version answered. */
  question_id: string;
  value: Json<unknown>;
  answered_at: Timestamp;
}

export interface StudyStatusEventsTable {
  workspace_id: string;
  event_id: Generated<number>;
  study_id: string;
  field: ColumnType<string, string | undefined, never>;
  from_status: StudyStatus | null;
  to_status: StudyStatus;
  user_id: string | null;
  /** Who made the change (null on rows older than the audit trail): see StatusEventActorKind. */
  actor_kind: ColumnType<StatusEventActorKind | null, StatusEventActorKind | null | undefined, never>;
  occurred_at: Timestamp;
  /** The writing transaction's id (xid8, read as text): pollers page in (tx_id, event_id) order. */
  tx_id: ColumnType<string, never, never>;
}

export type PropertyType = 'STRING' | 'NUMBER' | 'DATETIME' | 'BOOLEAN' | 'SINGLE_SELECT' | 'MULTI_SELECT' | 'LOCATION';
export type OptionColor = 'GREEN' | 'YELLOW' | 'BLUE' | 'GREY' | 'RED' | 'ORANGE' | 'PURPLE' | 'PINK';
export type PropertyScopeType = 'ALL' | 'SPECIFIC';

export interface PropertyGroupsTable {
  workspace_id: string;
  property_group_id: string;
  name: string;
  scope_type: PropertyScopeType;
  is_default: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: Timestamp;
}

export interface PropertyGroupPopulationsTable {
  workspace_id: string;
  property_group_id: string;
  population_id: string;
}

export interface PersonPropertiesTable {
  workspace_id: string;
  property_id: string;
  name: string;
  property_type: PropertyType;
  is_unique: boolean;
  is_phi: boolean;
  is_pii: boolean;
  description: ColumnType<string, string | undefined, string>;
  property_group_id: string;
  created_by_user_id: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** The person may change their own value on their page (migration 20261208100000_person_access). */
  editable_by_person: ColumnType<boolean, boolean | undefined, boolean>;
}

export interface PropertyOptionsTable {
  workspace_id: string;
  option_id: string;
  property_id: string;
  name: string;
  color: OptionColor;
  position: number;
}

export type ContactStatus = 'CONTACTABLE' | 'OPTED_OUT' | 'UNREACHABLE';

/** A custom property's value as stored in people.properties (contract §2 shapes). */
export type PropertyValue = string | number | boolean | string[] | PersonLocation;

export interface PersonLocation {
  address?: string;
  city?: string;
  region?: string;
  postalCode?: string;
  country: string;
  lat?: number;
  lng?: number;
}

export interface PeopleTable {
  workspace_id: string;
  person_id: string;
  email: string | null;
  /** lower(email), stored (migration 20261129000000_people_email_key): what the unique index, sorts and comparisons read. */
  email_key: GeneratedAlways<string | null>;
  first_name: string | null;
  last_name: string | null;
  phone: string | null;
  additional_emails: ColumnType<string[], string[] | undefined, string[]>;
  additional_phones: ColumnType<string[], string[] | undefined, string[]>;
  is_opted_out: ColumnType<boolean, boolean | undefined, boolean>;
  contact_status: ColumnType<ContactStatus, ContactStatus | undefined, ContactStatus>;
  contact_status_updated_at: Timestamp | null;
  properties: ColumnType<Record<string, PropertyValue>, string | undefined, string>;
  import_source: string | null;
  last_import_id: string | null;
  imported_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
  purged_at: Timestamp | null;
  /** The latest contact (invitation or screener sent), kept with the participant status event that records it. */
  last_contact_at: ColumnType<string | null, string | null | undefined, string | null>;
  /** coalesce(last_contact_at, infinity) and coalesce(last_contact_at, -infinity), stored (migration 20261130000000_stored_sort_keys): what LAST_CONTACT_DATE sorts by. */
  last_contact_key_asc: GeneratedAlways<string>;
  last_contact_key_desc: GeneratedAlways<string>;
  /** The person's number in the search counts' arrays (src/search/counts/): given by a sequence, never changed. */
  person_no: ColumnType<number, never, never>;
}

export interface PersonUniqueValuesTable {
  workspace_id: string;
  property_id: string;
  value_key: string;
  person_id: string;
}

export interface PopulationMembersTable {
  workspace_id: string;
  population_id: string;
  person_id: string;
  added_at: Timestamp;
}

export interface DB {
  people: PeopleTable;
  person_access_links: PersonAccessLinksTable;
  person_sessions: PersonSessionsTable;
  person_unique_values: PersonUniqueValuesTable;
  population_members: PopulationMembersTable;
  service_secrets: ServiceSecretsTable;
  incentive_provider_accounts: IncentiveProviderAccountsTable;
  provider_webhook_receipts: ProviderWebhookReceiptsTable;
  workspaces: WorkspacesTable;
  users: UsersTable;
  teams: TeamsTable;
  team_members: TeamMembersTable;
  api_tokens: ApiTokensTable;
  custom_roles: CustomRolesTable;
  populations: PopulationsTable;
  studies: StudiesTable;
  study_owners: StudyOwnersTable;
  study_templates: StudyTemplatesTable;
  screeners: ScreenersTable;
  screener_questions: ScreenerQuestionsTable;
  screener_answers: ScreenerAnswersTable;
  study_status_events: StudyStatusEventsTable;
  property_groups: PropertyGroupsTable;
  property_group_populations: PropertyGroupPopulationsTable;
  person_properties: PersonPropertiesTable;
  property_options: PropertyOptionsTable;
  jobs: JobsTable;
  imports: ImportsTable;
  import_chunks: ImportChunksTable;
  import_errors: ImportErrorsTable;
  participants: ParticipantsTable;
  participant_status_events: ParticipantStatusEventsTable;
  consent_submissions: ConsentSubmissionsTable;
  consent_forms: ConsentFormsTable;
  consent_form_versions: ConsentFormVersionsTable;
  segments: SegmentsTable;
  signup_forms: SignupFormsTable;
  signup_submissions: SignupSubmissionsTable;
  incentives: IncentivesTable;
  incentive_budgets: IncentiveBudgetsTable;
  incentive_approval_thresholds: IncentiveApprovalThresholdsTable;
  incentive_ledger: IncentiveLedgerTable;
  idempotency_keys: IdempotencyKeysTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_messages: WebhookMessagesTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  message_templates: MessageTemplatesTable;
  messages: MessagesTable;
  message_events: MessageEventsTable;
  participant_links: ParticipantLinksTable;
  screener_responses: ScreenerResponsesTable;
  quota_groups: QuotaGroupsTable;
  screener_starts: ScreenerStartsTable;
  branding_configs: BrandingConfigsTable;
  study_schedules: StudySchedulesTable;
  study_hosts: StudyHostsTable;
  sessions: SessionsTable;
  bookings: BookingsTable;
  booking_notifications: BookingNotificationsTable;
  calendar_feeds: CalendarFeedsTable;
  session_reminders: SessionRemindersTable;
  backfills: BackfillsTable;
  backfill_chunks: BackfillChunksTable;
  backfill_errors: BackfillErrorsTable;
  user_sign_in_links: UserSignInLinksTable;
  user_sessions: UserSessionsTable;
  user_passwords: UserPasswordsTable;
  audit_events: AuditEventsTable;
  audit_settings: AuditSettingsTable;
  sso_settings: SsoSettingsTable;
  sso_sign_in_attempts: SsoSignInAttemptsTable;
  user_sso_identities: UserSsoIdentitiesTable;
}

export type JobState = 'queued' | 'running' | 'completed' | 'failed';

/** Background jobs (src/jobs/); system-wide ones carry the reserved workspace id '_system'. */
export interface JobsTable {
  workspace_id: string;
  job_id: string;
  queue: string;
  payload: Json<unknown>;
  state: JobState;
  singleton_key: string | null;
  run_after: Timestamp;
  attempts: ColumnType<number, number | undefined, number>;
  max_attempts: number;
  backoff_seconds: number;
  lease_token: string | null;
  locked_until: Timestamp | null;
  result: ColumnType<unknown, string | null | undefined, string | null>;
  last_error: string | null;
  created_at: Timestamp;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
  updated_at: Timestamp;
}

export type ImportStatus = 'RECEIVING' | 'QUEUED' | 'RUNNING' | 'COMPLETED' | 'FAILED';
export type ImportDelimiter = ',' | ';' | '\t';

/** CSV imports of people (src/families/imports/); RECEIVING ones are still being uploaded. */
export interface ImportsTable {
  workspace_id: string;
  import_id: string;
  status: ImportStatus;
  population_id: string | null;
  created_by_user_id: string;
  byte_count: ColumnType<string, string | number | undefined, string | number>;
  chunk_count: ColumnType<number, number | undefined, number>;
  job_id: string | null;
  /** Data rows consumed by committed batches: a rerun resumes after them. */
  rows_committed: ColumnType<number, number | undefined, number>;
  rows_total: number | null;
  rows_imported: ColumnType<number, number | undefined, number>;
  rows_failed: ColumnType<number, number | undefined, number>;
  /** Error rows kept in import_errors (capped; rows_failed counts them all). */
  error_count: ColumnType<number, number | undefined, number>;
  /** The file's field separator, detected from its header row at upload. */
  delimiter: ColumnType<ImportDelimiter, ImportDelimiter | undefined, ImportDelimiter>;
  /** The file's row number (the header is row 1) of the last row a committed batch read. */
  last_row_number: number | null;
  /** Why a FAILED import stopped. */
  failure_reason: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  finished_at: Timestamp | null;
}

export interface ImportChunksTable {
  workspace_id: string;
  import_id: string;
  chunk_index: number;
  data: Uint8Array;
}

export interface ImportErrorsTable {
  workspace_id: string;
  import_id: string;
  row_number: number;
  message: string;
}

export type UserRow = Selectable<UsersTable>;
export type StudyRow = Selectable<StudiesTable>;
export type NewStudy = Insertable<StudiesTable>;
export type StudyUpdate = Updateable<StudiesTable>;
export type UserRole = UsersTable['role'];

/** INTERVIEWS and GROUP_INTERVIEW are both INTERVIEW: the kind the participation history counts by. */
export type StudyKind = 'INTERVIEW' | 'UNMODERATED_TEST' | 'SURVEY';
export type ParticipantStatus = 'NOT_STARTED' | 'INVITED' | 'SCHEDULED' | 'COMPLETED' | 'NO_SHOW' | 'CANCELED' | 'HIDDEN';
export type ParticipantApprovalStatus = 'PENDING_REVIEW' | 'APPROVED' | 'REJECTED';
export type ParticipantScreenerState = 'NOT_SENT' | 'SCREENER_SENT' | 'SUBMITTED' | 'QUALIFIED' | 'DISQUALIFIED';

/** A person taking part in a study; every study's rows together are the panel's participation history. */
export interface ParticipantsTable {
  workspace_id: string;
  participant_id: string;
  study_id: string;
  person_id: string;
  /** The person's person_no, filled in by the database on insert (migration 20261201000000_participant_person_no). */
  person_no: Generated<number>;
  study_kind: StudyKind;
  status: ColumnType<ParticipantStatus, ParticipantStatus | undefined, ParticipantStatus>;
  status_before_hidden: Exclude<ParticipantStatus, 'HIDDEN'> | null;
  approval_status: ColumnType<ParticipantApprovalStatus, ParticipantApprovalStatus | undefined, ParticipantApprovalStatus>;
  screener_state: ColumnType<ParticipantScreenerState, ParticipantScreenerState | undefined, ParticipantScreenerState>;
  invited_at: Timestamp | null;
  approved_at: Timestamp | null;
  screener_sent_at: Timestamp | null;
  screener_submitted_at: Timestamp | null;
  interview_start_time: Timestamp | null;
  /** coalesce(interview_start_time, ±infinity), stored (migration 20261130100000_participant_sort_keys): what INTERVIEW_START_TIME sorts by. */
  interview_start_key_asc: GeneratedAlways<string>;
  interview_start_key_desc: GeneratedAlways<string>;
  test_completed_at: Timestamp | null;
  /** Set once, when the participant first reaches COMPLETED. */
  completed_at: Timestamp | null;
  no_show_count: ColumnType<number, number | undefined, number>;
  rating: number | null;
  note: string | null;
  note_created_by_user_id: string | null;
  quota_group: string | null;
  consent_submitted_at: Timestamp | null;
  added_by_user_id: string | null;
  added_at: Timestamp;
  updated_at: Timestamp;
  /** The person asked for no more messages about this study, on their page (migration 20261208100000_person_access). */
  messages_stopped_at: ColumnType<string | null, string | null | undefined, string | null>;
  /** The backfill that wrote this participation (src/families/backfills/), else null. */
  backfill_id: ColumnType<string | null, string | null | undefined, never>;
}

/** A sign-in link of the person's page (src/families/person-access/): the token's digest only. */
export interface PersonAccessLinksTable {
  workspace_id: string;
  link_id: string;
  person_id: string;
  token_sha256: Buffer;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}

/** A signed-in person's session (src/families/person-access/): the cookie token's digest only. */
export interface PersonSessionsTable {
  workspace_id: string;
  session_id: string;
  person_id: string;
  token_sha256: Buffer;
  created_at: Timestamp;
  last_seen_at: Timestamp;
  expires_at: Timestamp;
  ended_at: Timestamp | null;
}

export type ParticipantEventField = 'status' | 'approvalStatus' | 'screenerState';

export interface ParticipantStatusEventsTable {
  workspace_id: string;
  event_id: Generated<number>;
  /** The writing transaction's id (xid8, read as text): pollers page in (tx_id, event_id) order. */
  tx_id: ColumnType<string, never, never>;
  study_id: string;
  participant_id: string;
  person_id: string;
  field: ParticipantEventField;
  from_value: string | null;
  to_value: string;
  /** An invitation or a screener sent: counted by TOTAL_NUMBER_OF_CONTACT and LAST_CONTACT_DATE. */
  is_contact: ColumnType<boolean, boolean | undefined, boolean>;
  user_id: string | null;
  /** Who made the change (null on rows older than the audit trail): see StatusEventActorKind. */
  actor_kind: ColumnType<StatusEventActorKind | null, StatusEventActorKind | null | undefined, never>;
  occurred_at: Timestamp;
  /** The backfill that wrote this event, else null. */
  backfill_id: ColumnType<string | null, string | null | undefined, never>;
}

export type ParticipantRow = Selectable<ParticipantsTable>;

/** How a consent was given (the consent family's sources; SIGNUP_FORM only through the public signup route). */
export type ConsentSource = 'API' | 'SIGNUP_FORM' | 'PAPER' | 'EMAIL' | 'VERBAL' | 'IMPORT' | 'OTHER' | 'PARTICIPANT_PAGE';

/**
 * A person's consent, for a study's consent form (study_id) or on a signup form (signup_form_id):
 * exactly one of the two. Written by the consent family alone (src/families/consent/writer.ts).
 */
/** A consent form (src/families/consent-forms/): its name and which of its versions is current. */
export interface ConsentFormsTable {
  workspace_id: string;
  consent_form_id: string;
  name: string;
  current_version: number;
  created_by_user_id: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A statement or choice of a consent form version, as stored (a JSON array of these). */
export interface StoredConsentStatement {
  id: string;
  text: string;
}

/** One published version of a consent form: never updated (a trigger refuses it). */
export interface ConsentFormVersionsTable {
  workspace_id: string;
  consent_form_id: string;
  version: number;
  title: string;
  body: string;
  required_statements: Json<StoredConsentStatement[]>;
  optional_choices: Json<StoredConsentStatement[]>;
  language: string;
  content_sha256: string;
  created_by_user_id: string;
  created_at: Timestamp;
}

export interface ConsentSubmissionsTable {
  workspace_id: string;
  consent_submission_id: string;
  person_id: string;
  consent_form_id: string | null;
  study_id: string | null;
  signup_form_id: string | null;
  /** The version of the form agreed to, as the workspace names it. */
  form_version: string | null;
  /** Lower-case hex SHA-256 of the consent text shown (the text itself is not kept). */
  text_sha256: string | null;
  source: ConsentSource;
  /** The user whose token recorded it; null for a public signup. */
  recorded_by_user_id: string | null;
  /** When the consent was given. */
  submitted_at: Timestamp;
  /** When it was recorded. */
  created_at: Timestamp;
  /** The full name the person typed on the participant's page (personal data); null for other sources. */
  signed_name: ColumnType<string | null, string | null | undefined, string | null>;
  /** Each optional choice of the version by id (true: agreed), for a consent signed on the page. */
  choices: ColumnType<Record<string, boolean> | null, string | null | undefined, string | null>;
  /** The participant link the page was opened with. */
  link_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** When the signed copy (a PDF by email) was handed to SMTP. */
  copy_sent_at: ColumnType<string | null, string | null | undefined, string | null>;
  /** When the person withdrew it. */
  withdrawn_at: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A saved people filter; members are whoever matches it at search time. */
export interface SegmentsTable {
  workspace_id: string;
  segment_id: string;
  name: string;
  description: ColumnType<string, string | undefined, string>;
  /** The RootFilter as given (without sort). */
  filter: Json<unknown>;
  /** The filter reads personal data: only tokens with the personal-data right may use or read it whole. */
  uses_personal_data: boolean;
  created_by_user_id: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface SignupFormsTable {
  workspace_id: string;
  /** `sgf_<workspaceId>_<ULID>`: the public submission route finds the workspace in the id. */
  signup_form_id: string;
  name: string;
  population_id: string;
  /** The consent form the signup form presents; null when it presents none. */
  consent_form_id: string | null;
  created_by_user_id: string;
  created_at: Timestamp;
}

export type SignupApprovalStatus = 'PENDING_REVIEW' | 'APPROVED' | 'REJECTED';

/** One sending of a signup form by a person, and its review. */
export interface SignupSubmissionsTable {
  workspace_id: string;
  submission_id: string;
  signup_form_id: string;
  person_id: string;
  approval_status: ColumnType<SignupApprovalStatus, SignupApprovalStatus | undefined, SignupApprovalStatus>;
  referral_code: string | null;
  consent_submission_id: string | null;
  submitted_at: Timestamp;
  /** When the approval status was last set to APPROVED or REJECTED; null while PENDING_REVIEW. */
  reviewed_at: Timestamp | null;
  reviewed_by_user_id: string | null;
}
export type IncentiveType = 'MONEY_OR_GIFT_CARD' | 'PROVIDER_ONE_MONEY' | 'RECRUITMENT_FEE' | 'CUSTOM';
export type IncentiveStatus = 'UNCLAIMED' | 'CLAIMED' | 'CANCELED' | 'ERROR' | 'SENT' | 'EXPIRED';
/** Where a provider-backed incentive's money stands at the provider (null for CUSTOM and RECRUITMENT_FEE). */
export type ProviderState = 'PENDING' | 'ORDERED' | 'FAILED' | 'VOIDING' | 'VOIDED' | 'AWAITING_APPROVAL' | 'NOT_ORDERED';
/** An incentive above the workspace's approval threshold: waiting (PENDING), then decided or withdrawn (canceled before a decision). */
export type ApprovalState = 'PENDING' | 'APPROVED' | 'REFUSED' | 'WITHDRAWN';
/** Why an order is being (or was) voided: a cancel (E17) or expiry. Set exactly while provider_state is VOIDING or VOIDED. */
export type VoidPurpose = 'CANCEL' | 'EXPIRE';

/** Payments to participants (src/families/incentives/); the migration explains the states. */
export interface IncentivesTable {
  workspace_id: string;
  incentive_id: string;
  study_id: string;
  participant_id: string;
  person_id: string;
  type: IncentiveType;
  amount_cents: number;
  /** ISO 4217; amount_cents is in its minor unit. */
  currency: ColumnType<string, string | undefined, never>;
  status: IncentiveStatus;
  budget_id: string | null;
  custom_incentive_id: string | null;
  custom_incentive_value: string | null;
  provider: string | null;
  provider_state: ProviderState | null;
  provider_reference: string | null;
  void_purpose: ColumnType<VoidPurpose | null, VoidPurpose | null | undefined, VoidPurpose | null>;
  provider_attempts: ColumnType<number, number | undefined, number>;
  provider_next_attempt_at: Timestamp | null;
  idempotency_key: string | null;
  idempotency_fingerprint: string | null;
  sent_by_user_id: string;
  sent_at: Timestamp;
  claimed_at: Timestamp | null;
  canceled_at: Timestamp | null;
  failed_at: Timestamp | null;
  expired_at: Timestamp | null;
  failure_reason: string | null;
  resend_count: ColumnType<number, number | undefined, number>;
  last_resent_at: Timestamp | null;
  /** When the reconciliation last asked the provider about this open order. */
  provider_checked_at: ColumnType<Timestamp | null, Timestamp | null | undefined, Timestamp | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** The incentive's amount is counted in its budget's spent_minor (given back once when it ends unpaid). */
  budget_held: ColumnType<boolean, boolean | undefined, boolean>;
  approval_state: ColumnType<ApprovalState | null, ApprovalState | null | undefined, ApprovalState | null>;
  approval_decided_by_user_id: ColumnType<string | null, string | null | undefined, string | null>;
  approval_decided_at: ColumnType<string | null, string | null | undefined, string | null>;
  approval_reason: ColumnType<string | null, string | null | undefined, string | null>;
  /** The backfill that wrote this incentive (paid in the tool it came from), else null. */
  backfill_id: ColumnType<string | null, string | null | undefined, never>;
}

export type IncentiveRow = Selectable<IncentivesTable>;

/** Incentive budgets (src/families/incentive-budgets/): limit and spent in the currency's minor unit. */
export interface IncentiveBudgetsTable {
  workspace_id: string;
  budget_id: string;
  name: string;
  currency: string;
  limit_minor: number;
  spent_minor: ColumnType<number, number | undefined, number>;
  archived_at: Timestamp | null;
  created_by_user_id: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}
export type IncentiveBudgetRow = Selectable<IncentiveBudgetsTable>;

/** Per currency: incentives above this amount (minor unit) wait for approval. */
export interface IncentiveApprovalThresholdsTable {
  workspace_id: string;
  currency: string;
  threshold_minor: number;
  updated_by_user_id: string;
  updated_at: Timestamp;
}

export type LedgerActorKind = 'USER' | 'JOB' | 'PROVIDER';

/** The append-only record of money events (src/families/incentives/ledger.ts). */
export interface IncentiveLedgerTable {
  workspace_id: string;
  entry_id: string;
  incentive_id: string;
  kind: string;
  amount_minor: number;
  currency: string;
  study_id: string;
  participant_id: string;
  person_id: string;
  budget_id: string | null;
  status: IncentiveStatus;
  actor_kind: LedgerActorKind;
  actor_id: string;
  token_id: string | null;
  recipient_email: string | null;
  note: string | null;
  at: Timestamp;
  backfill_id: ColumnType<string | null, string | null | undefined, never>;
}
export type IncentiveLedgerRow = Selectable<IncentiveLedgerTable>;

/** A workspace's account at an incentive provider (src/providers/accounts.ts). */
export interface IncentiveProviderAccountsTable {
  workspace_id: string;
  provider: string;
  environment: 'SANDBOX' | 'PRODUCTION';
  credentials_ciphertext: string;
  credentials_key_id: string;
  credential_names: string[];
  version: number;
  selected: boolean;
  updated_by_user_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Provider webhook events already applied (src/families/provider-webhooks/). */
export interface ProviderWebhookReceiptsTable {
  workspace_id: string;
  provider: string;
  event_id: string;
  incentive_id: string | null;
  received_at: Timestamp;
}

/** Idempotency-Key reservations and stored responses of POST requests (src/http/idempotency/plugin.ts). */
export interface IdempotencyKeysTable {
  workspace_id: string;
  idempotency_key: string;
  fingerprint: string;
  lease_token: string | null;
  locked_until: Timestamp | null;
  response_status: number | null;
  response_content_type: string | null;
  response_body: string | null;
  created_at: Timestamp;
  completed_at: Timestamp | null;
}

export type WebhookDeliveryState = 'PENDING' | 'SUCCEEDED' | 'FAILED';
export type WebhookAttemptTrigger = 'SCHEDULED' | 'MANUAL' | 'TEST';

/** Endpoints a workspace delivers events to (src/families/webhooks/). */
export interface WebhookEndpointsTable {
  workspace_id: string;
  endpoint_id: string;
  url: string;
  description: string;
  /** The event types subscribed to; empty: every type. */
  event_types: string[];
  enabled: boolean;
  disabled_reason: string | null;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: Timestamp | null;
  failing_since: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** The outbox: one row per event, written in the transaction of the change it reports. */
export interface WebhookMessagesTable {
  workspace_id: string;
  message_id: string;
  event_type: string;
  occurred_at: Timestamp;
  payload: Json<unknown>;
}

export interface WebhookDeliveriesTable {
  workspace_id: string;
  endpoint_id: string;
  message_id: string;
  state: WebhookDeliveryState;
  attempt_count: ColumnType<number, number | undefined, number>;
  trigger: ColumnType<'SCHEDULED' | 'MANUAL', 'SCHEDULED' | 'MANUAL' | undefined, 'SCHEDULED' | 'MANUAL'>;
  next_attempt_at: Timestamp | null;
  created_at: Timestamp;
  last_attempt_at: Timestamp | null;
}

export interface WebhookAttemptsTable {
  workspace_id: string;
  attempt_id: string;
  endpoint_id: string;
  message_id: string;
  trigger: WebhookAttemptTrigger;
  attempted_at: Timestamp;
  duration_ms: number;
  succeeded: boolean;
  response_status: number | null;
  response_body: string | null;
  error: string | null;
}

/** Message templates (src/families/messages/): Liquid source, checked against the variable catalogue when saved. */
export interface MessageTemplatesTable {
  workspace_id: string;
  template_id: string;
  name: string;
  subject: string;
  text_body: string;
  html_body: string | null;
  created_by_user_id: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type MessageStatus = 'QUEUED' | 'SENT' | 'FAILED' | 'NOT_SENT';
/** What sent a message: a send to participants, a participant's move that reaches out, or a session's reminder (the service's own message, from its catalogue). */
export type MessageOrigin = 'SEND' | 'INVITED' | 'SCREENER_SENT' | 'REMINDER';
export type MessageEventType = 'SENT' | 'RETRYING' | 'FAILED' | 'NOT_SENT' | 'UNSUBSCRIBED';

export interface MessagesTable {
  workspace_id: string;
  message_id: string;
  person_id: string;
  study_id: string | null;
  participant_id: string | null;
  /** Null for a message the service writes from its own catalogue (origin REMINDER). */
  template_id: string | null;
  template_name: string;
  origin: MessageOrigin;
  counts_as_contact: boolean;
  status: MessageStatus;
  not_sent_reason: string | null;
  attempt_count: ColumnType<number, number | undefined, number>;
  next_attempt_at: Timestamp | null;
  last_attempt_at: Timestamp | null;
  last_error: string | null;
  last_smtp_code: number | null;
  queued_at: Timestamp;
  sent_at: Timestamp | null;
  failed_at: Timestamp | null;
  unsubscribed_at: Timestamp | null;
  recipient_email: string | null;
  subject: string | null;
  text_body: string | null;
  html_body: string | null;
  smtp_message_id: string | null;
  /** Null for a message no user requested (a session reminder). */
  created_by_user_id: string | null;
}

export interface MessageEventsTable {
  workspace_id: string;
  event_id: string;
  message_id: string;
  occurred_at: Timestamp;
  type: MessageEventType;
  smtp_code: number | null;
  detail: string | null;
}

export type ParticipantLinkPurpose = 'SCREENER' | 'CONSENT' | 'WITHDRAWAL' | 'SCHEDULING';

/** Links to the participant's pages (src/families/participant-links/): the token's SHA-256 only. */
export interface ParticipantLinksTable {
  workspace_id: string;
  link_id: string;
  participant_id: string;
  study_id: string;
  person_id: string;
  purpose: ParticipantLinkPurpose;
  token_sha256: Buffer;
  message_id: string | null;
  created_by_user_id: string | null;
  created_at: Timestamp;
  expires_at: Timestamp | null;
  last_used_at: Timestamp | null;
}

/** A condition of a quota group over one screener answer: the question by its key (stable across revisions), and the choices or the number range that match. */
export type QuotaAnswerCondition = { questionKey: string; choiceIds: string[] } | { questionKey: string; range: NumberRange };

/** A study's quota group (src/families/quota-groups/): a condition, a cap, and the places filled. */
export interface QuotaGroupsTable {
  workspace_id: string;
  quota_group_id: string;
  study_id: string;
  name: string;
  position: number;
  cap: number;
  filled: ColumnType<number, number | undefined, number>;
  answers: Json<QuotaAnswerCondition[]>;
  filter: NullableJson<unknown>;
  uses_personal_data: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A participant's submission of a screener (src/families/screener-responses/): one per participant. */
export interface ScreenerResponsesTable {
  workspace_id: string;
  participant_id: string;
  study_id: string;
  person_id: string;
  revision: number;
  outcome: 'QUALIFIED' | 'DISQUALIFIED' | 'NEEDS_REVIEW' | 'OVER_QUOTA';
  decided_by: Json<unknown>;
  suspected_bot: ColumnType<boolean, boolean | undefined, boolean>;
  started_at: Timestamp | null;
  submitted_at: Timestamp;
  seconds_to_complete: number | null;
  link_id: string | null;
}

/** A participant's first refused post of their screener's form: the funnel's "started" (src/families/screener-responses/). */
export interface ScreenerStartsTable {
  workspace_id: string;
  participant_id: string;
  study_id: string;
  started_at: Timestamp;
}

/** A branding config of the participant pages (src/families/branding/), with its logo's bytes. */
export interface BrandingConfigsTable {
  workspace_id: string;
  branding_config_id: string;
  display_name: string;
  /** #rrggbb, lower case; null: the pages' own accent. */
  accent_color: string | null;
  logo: Uint8Array | null;
  logo_content_type: 'image/png' | 'image/jpeg' | 'image/webp' | null;
  logo_sha256: string | null;
  logo_width: number | null;
  logo_height: number | null;
  logo_alt: string | null;
  created_by_user_id: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A study's booking rules (src/families/scheduling/). */
export interface StudySchedulesTable {
  workspace_id: string;
  study_id: string;
  duration_minutes: number | null;
  buffer_before_minutes: ColumnType<number, number | undefined, number>;
  buffer_after_minutes: ColumnType<number, number | undefined, number>;
  minimum_notice_minutes: ColumnType<number, number | undefined, number>;
  horizon_days: ColumnType<number, number | undefined, number>;
  daily_cap: number | null;
  capacity: ColumnType<number, number | undefined, number>;
  slot_interval_minutes: number | null;
  person_change_cutoff_minutes: number | null;
  reminder_offsets_minutes: ColumnType<number[], number[] | undefined, number[]>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A wall-clock range of a host's day, 'HH:MM' to 'HH:MM' ('24:00' ends the day). */
export interface HostTimeRange {
  start: string;
  end: string;
}

/** A study's host: weekly hours in an IANA time zone and date overrides (src/families/scheduling/). */
export interface StudyHostsTable {
  workspace_id: string;
  study_id: string;
  user_id: string;
  position: number;
  time_zone: string;
  weekly_hours: Json<Partial<Record<string, HostTimeRange[]>>>;
  overrides: Json<{ date: string; hours: HostTimeRange[] }[]>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** One occurrence of a host's time in a study, with its places (src/families/scheduling/). */
export interface SessionsTable {
  workspace_id: string;
  session_id: string;
  study_id: string;
  host_user_id: string;
  starts_at: Timestamp;
  ends_at: Timestamp;
  buffer_before_minutes: number;
  buffer_after_minutes: number;
  capacity: number;
  booked: ColumnType<number, number | undefined, number>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type BookingStatus = 'BOOKED' | 'CANCELED';
export type BookingActor = 'PERSON' | 'TEAM';

/** A participant's place in a session (src/families/scheduling/): at most one BOOKED per participant. */
export interface BookingsTable {
  workspace_id: string;
  booking_id: string;
  study_id: string;
  participant_id: string;
  person_id: string;
  session_id: string;
  status: BookingStatus;
  booked_by: BookingActor;
  booked_by_user_id: string | null;
  person_time_zone: string | null;
  sequence: ColumnType<number, number | undefined, number>;
  cancel_reason: string | null;
  canceled_by: BookingActor | null;
  canceled_by_user_id: string | null;
  canceled_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type BookingNotificationMethod = 'REQUEST' | 'CANCEL';
export type BookingNotificationRecipient = 'PERSON' | 'HOST';

/** An invitation sent: a booking's sequence and method, to the person or the host (src/families/scheduling/notify-job.ts). */
export interface BookingNotificationsTable {
  workspace_id: string;
  booking_id: string;
  sequence: number;
  method: BookingNotificationMethod;
  recipient: BookingNotificationRecipient;
  sent_at: Timestamp;
  smtp_message_id: string | null;
  link_id: string | null;
}

/** A workspace user's subscribable calendar of the sessions they host (src/families/calendar-feeds/): the token's SHA-256 only. */
export interface CalendarFeedsTable {
  workspace_id: string;
  feed_id: string;
  user_id: string;
  token_sha256: Buffer;
  created_at: Timestamp;
  revoked_at: Timestamp | null;
  last_used_at: Timestamp | null;
}

/** Why the sweep queued no message for a due reminder (src/families/scheduling/reminders.ts). */
export type SessionReminderSkipReason = 'OPTED_OUT' | 'DELETED' | 'UNREACHABLE' | 'NO_EMAIL' | 'BOOKED_AFTER_DUE';

/** One reminder of one booking's time (its sequence) decided on once: the message queued, or why none was. */
export interface SessionRemindersTable {
  workspace_id: string;
  booking_id: string;
  sequence: number;
  offset_minutes: number;
  due_at: Timestamp;
  message_id: string | null;
  skip_reason: SessionReminderSkipReason | null;
  created_at: Timestamp;
}

export type BackfillStatus = 'RECEIVING' | 'QUEUED' | 'RUNNING' | 'COMPLETED' | 'FAILED';

/** A backfill of a panel's history from CSV (src/families/backfills/, migration 20261214000000_backfills). */
export interface BackfillsTable {
  workspace_id: string;
  backfill_id: string;
  status: BackfillStatus;
  delimiter: ColumnType<ImportDelimiter, ImportDelimiter | undefined, ImportDelimiter>;
  created_by_user_id: string;
  byte_count: ColumnType<number, number | undefined, number>;
  chunk_count: ColumnType<number, number | undefined, number>;
  job_id: string | null;
  rows_committed: ColumnType<number, number | undefined, number>;
  rows_total: number | null;
  rows_written: ColumnType<number, number | undefined, number>;
  rows_skipped: ColumnType<number, number | undefined, number>;
  rows_failed: ColumnType<number, number | undefined, number>;
  error_count: ColumnType<number, number | undefined, number>;
  studies_created: ColumnType<number, number | undefined, number>;
  incentives_written: ColumnType<number, number | undefined, number>;
  last_row_number: number | null;
  failure_reason: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  finished_at: Timestamp | null;
}

export interface BackfillChunksTable {
  workspace_id: string;
  backfill_id: string;
  chunk_index: number;
  data: Uint8Array;
}

export interface BackfillErrorsTable {
  workspace_id: string;
  backfill_id: string;
  row_number: number;
  column_name: string | null;
  message: string;
}

/** A link emailed to a workspace user (src/families/sign-in/): an invitation or a sign-in link, its token's SHA-256 only. */
export interface UserSignInLinksTable {
  workspace_id: string;
  link_id: string;
  user_id: string;
  purpose: 'INVITATION' | 'SIGN_IN';
  token_sha256: Buffer;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}

/** How a console session began. */
export type UserSessionMethod = 'INVITATION' | 'LINK' | 'PASSWORD' | 'OIDC';

/** A workspace user's console session (src/families/sign-in/): its cookie secret's SHA-256 only. */
export interface UserSessionsTable {
  workspace_id: string;
  session_id: string;
  user_id: string;
  method: UserSessionMethod;
  token_sha256: Buffer;
  created_at: Timestamp;
  last_seen_at: Timestamp;
  expires_at: Timestamp;
  ended_at: Timestamp | null;
}

/** A workspace user's password: an argon2id PHC string (src/families/sign-in/passwords.ts). */
export interface UserPasswordsTable {
  workspace_id: string;
  user_id: string;
  password_hash: string;
  updated_at: Timestamp;
}

/** Who changed a status: a user (user_id says who), the person on the participant's pages, or the service's own work. */
export type StatusEventActorKind = 'USER' | 'PARTICIPANT' | 'SERVICE';
export type AuditActorKind = 'USER' | 'PARTICIPANT' | 'VISITOR' | 'SERVICE' | 'OPERATOR';

/** The audit trail (src/families/audit/): ids, operation names and states, never personal data. */
export interface AuditEventsTable {
  workspace_id: string;
  audit_event_id: string;
  occurred_at: Timestamp;
  actor_kind: AuditActorKind;
  actor_user_id: string | null;
  /** The API key's or session's id the user came with. */
  actor_credential_id: string | null;
  actor_person_id: string | null;
  /** The job's queue or the provider's name, for SERVICE. */
  actor_service: string | null;
  operation_id: string;
  method: string | null;
  resource_type: string | null;
  resource_id: string | null;
  request_id: string | null;
  status_code: number | null;
  before_state: string | null;
  after_state: string | null;
}

export interface AuditSettingsTable {
  workspace_id: string;
  retention_days: number;
  updated_by_user_id: string | null;
  updated_at: Timestamp;
}

/** A workspace's single sign-on (src/families/sign-in/sso*.ts): its OpenID Connect provider, the client secret sealed. */
export interface SsoSettingsTable {
  workspace_id: string;
  issuer: string;
  client_id: string;
  client_secret_sealed: string | null;
  jit_domains: string[];
  jit_role: 'DEVELOPER' | 'OBSERVER' | 'RESEARCHER' | 'OPS_MANAGER' | 'COLLABORATOR';
  enabled: boolean;
  version: number;
  updated_by_user_id: string | null;
  updated_at: Timestamp;
}

/** A sign-in sent to the provider and not yet back: its browser secret's SHA-256, and what the answer must match. */
export interface SsoSignInAttemptsTable {
  workspace_id: string;
  attempt_id: string;
  flow_sha256: Buffer;
  settings_version: number;
  state: string;
  nonce: string;
  code_verifier: string;
  redirect_uri: string;
  created_at: Timestamp;
  expires_at: Timestamp;
}

/** Which user a provider's subject is. */
export interface UserSsoIdentitiesTable {
  workspace_id: string;
  issuer: string;
  subject: string;
  user_id: string;
  created_at: Timestamp;
}

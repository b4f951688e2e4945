import type { Migration } from 'kysely';
import * as foundation from './20261122000000_foundation.js';
import * as personProperties from './20261123000000_person_properties.js';
import * as jobs from './20261123000100_jobs.js';
import * as people from './20261123000200_people.js';
import * as imports from './20261123000400_imports.js';
import * as search from './20261123000500_search.js';
import * as participants from './20261123001000_participants.js';
import * as signups from './20261123003000_signups.js';
import * as segments from './20261123004000_segments.js';
import * as incentives from './20261123005000_incentives.js';
import * as importChunkStorage from './20261123007100_import_chunk_storage.js';
import * as incentiveVoidPurpose from './20261124001000_incentive_void_purpose.js';
import * as searchPaths from './20261124002000_search_paths.js';
import * as propertyStatistics from './20261124002100_property_statistics.js';
import * as textSearch from './20261124100000_text_search.js';
import * as searchCounts from './20261124100100_search_counts.js';
import * as textStatistics from './20261124110000_text_statistics.js';
import * as rowLevelSecurity from './20261124120000_row_level_security.js';
import * as customIncentiveWithoutAmount from './20261125000000_custom_incentive_without_amount.js';
import * as webhooks from './20261126000000_webhooks.js';
import * as messageTemplates from './20261127000000_message_templates.js';
import * as messageSending from './20261128000000_message_sending.js';
import * as consentSubmissions from './20261128100000_consent_submissions.js';
import * as peopleEmailKey from './20261129000000_people_email_key.js';
import * as storedSortKeys from './20261130000000_stored_sort_keys.js';
import * as participantSortKeys from './20261130100000_participant_sort_keys.js';
import * as participantPersonNo from './20261201000000_participant_person_no.js';
import * as walksHoldPersonNo from './20261202000000_walks_hold_person_no.js';
import * as trigramIndexEmbeddedOnly from './20261203000000_trigram_index_embedded_only.js';
import * as importFileFormat from './20261204000000_import_file_format.js';
import * as erasureAtDeletion from './20261205000000_erasure_at_deletion.js';
import * as signupFormConsent from './20261205000100_signup_form_consent.js';
import * as screenerDefinition from './20261206000000_screener_definition.js';
import * as participantLinks from './20261206100000_participant_links.js';
import * as consentForms from './20261206200000_consent_forms.js';
import * as screenerResponses from './20261206300000_screener_responses.js';
import * as quotaGroups from './20261207000000_quota_groups.js';
import * as screenerStarts from './20261207100000_screener_starts.js';
import * as consentSignedOnPage from './20261207200000_consent_signed_on_page.js';
import * as brandingConfigs from './20261207300000_branding_configs.js';
import * as scheduling from './20261208000000_scheduling.js';
import * as personAccess from './20261208100000_person_access.js';
import * as calendarFeeds from './20261208200000_calendar_feeds.js';
import * as sessionReminders from './20261208300000_session_reminders.js';
import * as money from './20261209000000_money.js';
import * as backfills from './20261214000000_backfills.js';
import * as linkLookupFunction from './20261210000000_link_lookup_function.js';
import * as accounts from './20261211000000_accounts.js';
import * as signIn from './20261212000000_sign_in.js';
import * as auditTrail from './20261213000000_audit_trail.js';
import * as singleSignOn from './20261215000000_single_sign_on.js';
import * as incentiveProviderAccounts from './20261209100000_incentive_provider_accounts.js';

/** Every migration, in order. Names are timestamps so that branches merge without renumbering. */
export const migrations: Record<string, Migration> = {
  '20261122000000_foundation': foundation,
  '20261123000000_person_properties': personProperties,
  '20261123000100_jobs': jobs,
  '20261123000200_people': people,
  '20261123000400_imports': imports,
  '20261123000500_search': search,
  '20261123001000_participants': participants,
  '20261123003000_signups': signups,
  '20261123004000_segments': segments,
  '20261123005000_incentives': incentives,
  '20261123007100_import_chunk_storage': importChunkStorage,
  '20261124001000_incentive_void_purpose': incentiveVoidPurpose,
  '20261124002000_search_paths': searchPaths,
  '20261124002100_property_statistics': propertyStatistics,
  '20261124100000_text_search': textSearch,
  '20261124100100_search_counts': searchCounts,
  '20261124110000_text_statistics': textStatistics,
  '20261124120000_row_level_security': rowLevelSecurity,
  '20261125000000_custom_incentive_without_amount': customIncentiveWithoutAmount,
  '20261126000000_webhooks': webhooks,
  '20261127000000_message_templates': messageTemplates,
  '20261128000000_message_sending': messageSending,
  '20261128100000_consent_submissions': consentSubmissions,
  '20261129000000_people_email_key': peopleEmailKey,
  '20261130000000_stored_sort_keys': storedSortKeys,
  '20261130100000_participant_sort_keys': participantSortKeys,
  '20261201000000_participant_person_no': participantPersonNo,
  '20261202000000_walks_hold_person_no': walksHoldPersonNo,
  '20261203000000_trigram_index_embedded_only': trigramIndexEmbeddedOnly,
  '20261204000000_import_file_format': importFileFormat,
  '20261205000000_erasure_at_deletion': erasureAtDeletion,
  '20261205000100_signup_form_consent': signupFormConsent,
  '20261206000000_screener_definition': screenerDefinition,
  '20261206100000_participant_links': participantLinks,
  '20261206200000_consent_forms': consentForms,
  '20261206300000_screener_responses': screenerResponses,
  '20261207000000_quota_groups': quotaGroups,
  '20261207100000_screener_starts': screenerStarts,
  '20261207200000_consent_signed_on_page': consentSignedOnPage,
  '20261207300000_branding_configs': brandingConfigs,
  '20261208000000_scheduling': scheduling,
  '20261208100000_person_access': personAccess,
  '20261208200000_calendar_feeds': calendarFeeds,
  '20261208300000_session_reminders': sessionReminders,
  '20261209000000_money': money,
  '20261209100000_incentive_provider_accounts': incentiveProviderAccounts,
  '20261210000000_link_lookup_function': linkLookupFunction,
  '20261211000000_accounts': accounts,
  '20261212000000_sign_in': signIn,
  '20261213000000_audit_trail': auditTrail,
  '20261214000000_backfills': backfills,
  '20261215000000_single_sign_on': singleSignOn,
};

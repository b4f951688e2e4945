import type { ComponentChildren } from 'preact';
import type { Schema } from '@recruit-ops/sdk/browser';
import { MaybeMasked } from '../components/Masked.js';
import { Moment } from '../components/Moment.js';
import { PopulationNames } from '../components/PopulationNames.js';
import { humanize } from '../components/StatusBadge.js';
import type { Person } from '../people.js';
import { propertyValueText } from '../properties.js';
import type { FilterProperty } from './model.js';

type Participant = Schema<'Participant'>;

/** How a results table shows the value of a property its filter names, from the row the search answered. */
export type ValueCell<Row> = (row: Row) => ComponentChildren;

const yesNo = (value: boolean | null | undefined) => (value === null || value === undefined ? <span class="muted">—</span> : value ? 'Yes' : 'No');
const moment = (at: string | null | undefined, as: 'moment' | 'zoned' | 'day' = 'moment') => (at ? <Moment at={at} as={as} /> : <span class="muted">—</span>);
const text = (value: string | null | undefined) => <MaybeMasked value={value} />;

/**
 * The PERSON names a Person answer holds, with how to show each. The others (counts, last
 * contact, signup answers…) are computed by the search and not returned with the person: a
 * table cannot show them, and says so.
 */
const personCells: Record<string, ValueCell<Person>> = {
  PERSON_ID: (person) => person.personId,
  NAME: (person) => text(person.name),
  FIRST_NAME: (person) => text(person.firstName),
  LAST_NAME: (person) => text(person.lastName),
  EMAIL: (person) => text(person.email),
  PHONE: (person) => text(person.phone),
  OPTED_OUT: (person) => yesNo(person.isOptedOut),
  CONTACT_STATUS: (person) => humanize(person.contactStatus),
  LAST_CHANGED_AT: (person) => moment(person.updatedAt),
  POPULATION_MEMBERSHIP: (person) => <PopulationNames populationIds={person.populationIds} />,
  PANEL_MEMBERSHIP: (person) => <PopulationNames populationIds={person.populationIds} />,
};

/** The PARTICIPANT names a Participant answer holds (its id is left out: a row names the person). */
const participantCells: Record<string, ValueCell<Participant>> = {
  STATUS: (participant) => humanize(participant.status),
  APPROVAL_STATUS: (participant) => humanize(participant.approvalStatus),
  SCREENER_STATUS: (participant) => (participant.screenerState ? humanize(participant.screenerState) : <span class="muted">—</span>),
  SCREENER_SENT_AT: (participant) => moment(participant.screenerSentAt),
  SCREENER_SUBMITTED_AT: (participant) => moment(participant.screenerResponseDate),
  TEST_COMPLETED_AT: (participant) => moment(participant.testCompletedAt),
  INTERVIEW_START_TIME: (participant) => moment(participant.interviewStartTime, 'zoned'),
  INTERVIEW_START_DATE: (participant) => moment(participant.interviewStartTime, 'day'),
  CONSENT_FORM_SUBMITTED: (participant) => yesNo(participant.consentFormSubmittedAt !== null),
  STUDY_QUOTA_GROUP: (participant) => text(participant.quotaGroup),
  STUDY_NOTE: (participant) => text(participant.note?.note),
};

/** How a Person row shows `property`: a PERSON name the answer holds, or a custom property's value; undefined for the others. */
export function personCell(property: FilterProperty): ValueCell<Person> | undefined {
  const { ref } = property;
  if ('propertyId' in ref) {
    const dateTime = property.type === 'datetime';
    return (person) => <MaybeMasked value={propertyValueText(person.properties[ref.propertyId], dateTime)} />;
  }
  return ref.propertyGroup === 'PERSON' ? personCells[ref.propertyName] : undefined;
}

/** How a participant row (with its person, undefined once deleted) shows `property`; undefined when neither answer holds it. */
export function participantCell(property: FilterProperty): ValueCell<{ participant: Participant; person: Person | undefined }> | undefined {
  const { ref } = property;
  if ('propertyGroup' in ref && ref.propertyGroup === 'PARTICIPANT') {
    const cell = participantCells[ref.propertyName];
    return cell && ((row) => cell(row.participant));
  }
  const cell = personCell(property);
  return cell && ((row) => (row.person ? cell(row.person) : <span class="muted">—</span>));
}

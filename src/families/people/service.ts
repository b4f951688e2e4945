import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Kysely, Updateable } from 'kysely';
import type { DB, PeopleTable, PropertyValue } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { conflict, notFound, personalDataRequired } from '../../http/errors.js';
import { MASKED_TEXT, maskEmail, maskText } from '../../http/masking.js';
import { idPrefixes, newId } from '../../ids.js';
import { findPopulationIds } from '../populations/queries.js';
import * as queries from './queries.js';
import { erasePeople } from './erasure.js';
import { insertNewPerson } from './writer.js';
import type { CreatePersonBody, DeletePeopleBody, UpdatePersonBody } from './requests.js';
import { checkPropertyValues, claimUniqueValues, loadPropertyCatalogue, releaseUniqueValues } from './values.js';
import type { CallContext as SharedCallContext } from '../../context.js';
import { recordEvents } from '../webhooks/outbox.js';

export type CallContext = Pick<SharedCallContext, 'db' | 'clock' | 'workspaceId' | 'canReadPersonalData'>;

export type PersonRow = queries.PersonRow;

/** The people columns a Person is presented from: a page of people selects only these (a row's other twelve columns were half of what a 1000-row page parsed). */
export const presentedPersonColumns = [
  'person_id',
  'email',
  'first_name',
  'last_name',
  'phone',
  'additional_emails',
  'additional_phones',
  'is_opted_out',
  'contact_status',
  'properties',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof PersonRow)[];

export type PresentablePerson = Pick<PersonRow, (typeof presentedPersonColumns)[number]>;

export interface Person {
  personId: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  name: string | null;
  phone: string | null;
  additionalEmails: string[];
  additionalPhones: string[];
  isOptedOut: boolean;
  contactStatus: PersonRow['contact_status'];
  populationIds: string[];
  properties: Record<string, PropertyValue>;
  createdAt: string;
  updatedAt: string;
}

const joinName = (firstName: string | null, lastName: string | null) => [firstName, lastName].filter((part) => part).join(' ') || null;

/**
 * People rows as Person responses: the population ids of all of them in one query, and (for a
 * token without the personal-data right) emails, phones, names and the values of properties
 * flagged isPII or isPHI masked. Rows are presented in the order given.
 */
export async function presentPeople(db: Kysely<DB>, workspaceId: string, rows: readonly PresentablePerson[], canReadPersonalData: boolean): Promise<Person[]> {
  const { populations, personalProperties } = await presentationContext(db, workspaceId, rows, canReadPersonalData);
  return rows.map((row) => {
    // Each row's values are its own (parsed for it): copied only to mask some.
    let properties: Record<string, PropertyValue> = row.properties;
    if (personalProperties.size > 0) {
      properties = {};
      for (const [id, value] of Object.entries(row.properties)) properties[id] = personalProperties.has(id) ? MASKED_TEXT : value;
    }
    return { ...personFields(row, populations, canReadPersonalData), properties };
  });
}

/** The people columns a page's Person is written from (writePeopleJson): `properties` as its JSON text, which is never parsed. */
export const personJsonColumns = [...presentedPersonColumns.filter((column) => column !== 'properties'), 'properties_json'] as const;

export type PersonJsonRow = Omit<PresentablePerson, 'properties'> & { properties_json: string };

/**
 * People rows as the JSON text of their Person responses, presented as presentPeople presents
 * them. Property values are written as PostgreSQL gave them: a 1000-row page's values were most of
 * its objects, each parsed by the driver, copied into the answer and written again by
 * JSON.stringify. They are parsed only for a row holding a value to mask.
 */
export async function writePeopleJson(db: Kysely<DB>, workspaceId: string, rows: readonly PersonJsonRow[], canReadPersonalData: boolean): Promise<string[]> {
  const { populations, personalProperties } = await presentationContext(db, workspaceId, rows, canReadPersonalData);
  const personalKeys = [...personalProperties].map((id) => JSON.stringify(id));
  const written: string[] = [];
  for (const [at, row] of rows.entries()) {
    // Written a slice at a time, the event loop served between them: a 1000-row page written at a
    // stretch held it for milliseconds, and every hop of another workspace's request waited (issue 32).
    if (at > 0 && at % WRITE_SLICE_ROWS === 0) await yieldToEventLoop();
    let properties = row.properties_json;
    // A row naming no personal property (as a key or a text) has none to mask.
    if (personalKeys.some((key) => properties.includes(key))) {
      const values = JSON.parse(properties) as Record<string, PropertyValue>;
      for (const id of Object.keys(values)) if (personalProperties.has(id)) values[id] = MASKED_TEXT;
      properties = JSON.stringify(values);
    }
    const fields = JSON.stringify(personFields(row, populations, canReadPersonalData));
    written.push(`${fields.slice(0, -1)},"properties":${properties}}`);
  }
  return written;
}

/** Rows of a page written between two turns of the event loop. */
const WRITE_SLICE_ROWS = 200;

/** What presenting these rows needs beyond them: their population ids, and the properties whose values the token may not read. */
async function presentationContext(db: Kysely<DB>, workspaceId: string, rows: readonly Pick<PersonRow, 'person_id'>[], canReadPersonalData: boolean) {
  if (rows.length === 0) return { populations: new Map<string, string[]>(), personalProperties: new Set<string>() };
  const populations = await queries.findPopulationIdsOf(
    db,
    workspaceId,
    rows.map((row) => row.person_id),
  );
  let personalProperties = new Set<string>();
  if (!canReadPersonalData) {
    const catalogue = await loadPropertyCatalogue(db, workspaceId);
    personalProperties = new Set([...catalogue.values()].filter((property) => property.isPersonalData).map((property) => property.propertyId));
  }
  return { populations, personalProperties };
}

/** A Person's fields but its property values (which both presenters add after them: JSON's order is no part of the answer). */
function personFields(row: Omit<PresentablePerson, 'properties'>, populations: ReadonlyMap<string, string[]>, canReadPersonalData: boolean): Omit<Person, 'properties'> {
  const name = joinName(row.first_name, row.last_name);
  return {
    personId: row.person_id,
    email: maskEmail(row.email ?? '', canReadPersonalData),
    firstName: maskText(row.first_name, canReadPersonalData),
    lastName: maskText(row.last_name, canReadPersonalData),
    name: maskText(name, canReadPersonalData),
    phone: maskText(row.phone, canReadPersonalData),
    additionalEmails: row.additional_emails.map((email) => maskEmail(email, canReadPersonalData)),
    additionalPhones: row.additional_phones.map((phone) => maskText(phone, canReadPersonalData)),
    isOptedOut: row.is_opted_out,
    contactStatus: row.contact_status,
    populationIds: populations.get(row.person_id) ?? [],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

const presentOne = async (context: CallContext, db: Kysely<DB>, row: PersonRow) => (await presentPeople(db, context.workspaceId, [row], context.canReadPersonalData))[0]!;

const now = (context: CallContext) => context.clock.now().toISOString();

async function ensureEmailFree(db: Kysely<DB>, workspaceId: string, email: string, personId?: string) {
  const holder = await queries.findPersonByEmail(db, workspaceId, email);
  if (holder && holder.person_id !== personId) throw conflict('A person with this email already exists', ['email']);
}

async function ensurePopulations(db: Kysely<DB>, workspaceId: string, populationIds: readonly string[]) {
  const found = await findPopulationIds(db, workspaceId, populationIds);
  const missing = populationIds.findIndex((populationId) => !found.has(populationId));
  if (missing !== -1) throw notFound('Population', ['populationIds', String(missing)]);
}

/** A unique-index violation on the email, raced past the check by a concurrent request. */
export function isEmailRace(error: unknown): boolean {
  const fields = error as { code?: string; constraint?: string; message?: string };
  return fields.code === '23505' && (fields.constraint === 'people_email_unique' || (fields.message ?? '').includes('people_email_unique'));
}

async function translatingRaces<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isEmailRace(error)) throw conflict('A person with this email already exists', ['email']);
    throw error;
  }
}

/**
 * Without the personal-data right a key learns nothing about personal values it cannot read: it
 * may not look a person up by a personal value, nor write one whose uniqueness check (a 409)
 * would answer whether someone else holds it: an email, or a value of a unique property flagged
 * isPII or isPHI. So it cannot create people (an email is required). It may still write the other
 * fields, blind (the answer is masked).
 */
function refuseLookupByPersonalData(context: Pick<CallContext, 'canReadPersonalData'>, what: string): void {
  if (!context.canReadPersonalData) throw personalDataRequired(what);
}

async function refuseUniquePersonalValues(db: Kysely<DB>, context: CallContext, properties: Record<string, unknown> | undefined): Promise<void> {
  if (context.canReadPersonalData || properties === undefined || Object.keys(properties).length === 0) return;
  const catalogue = await loadPropertyCatalogue(db, context.workspaceId);
  for (const propertyId of Object.keys(properties)) {
    const property = catalogue.get(propertyId);
    if (property?.isUnique && property.isPersonalData) throw personalDataRequired('Setting a value of a unique personal-data property');
  }
}

export async function createPerson(context: CallContext, body: CreatePersonBody): Promise<Person> {
  const { workspaceId } = context;
  refuseLookupByPersonalData(context, 'Creating a person (its email must be unique)');
  return translatingRaces(() =>
    inTransaction(context.db, async (db) => {
      const populationIds = [...new Set(body.populationIds ?? [])];
      await ensurePopulations(db, workspaceId, body.populationIds ?? []);
      await ensureEmailFree(db, workspaceId, body.email);
      const checked = await checkPropertyValues(db, workspaceId, body.properties ?? {});
      const at = now(context);
      const personId = newId(idPrefixes.person);
      const row = await insertNewPerson(db, workspaceId, personId, { ...body, properties: checked.set }, at);
      await claimUniqueValues(db, workspaceId, personId, checked.catalogue, checked.set);
      await queries.addMemberships(db, workspaceId, personId, populationIds, at);
      return presentOne(context, db, row);
    }),
  );
}

export async function getPerson(context: CallContext, personId: string): Promise<Person> {
  const row = await queries.findPersonById(context.db, context.workspaceId, personId);
  if (!row) throw notFound('Person', ['personId']);
  return presentOne(context, context.db, row);
}

/** PATCH: only the fields given change; `properties` merges key by key, null removing a value. */
export async function updatePerson(context: CallContext, personId: string, body: UpdatePersonBody, actor: 'TEAM' | 'PERSON' = 'TEAM'): Promise<Person> {
  const { workspaceId } = context;
  return translatingRaces(() =>
    inTransaction(context.db, async (db) => {
      const existing = await queries.findPersonById(db, workspaceId, personId, { forUpdate: true });
      if (!existing) throw notFound('Person', ['personId']);
      if (body.email !== undefined) refuseLookupByPersonalData(context, 'Changing an email (it must be unique)');
      await refuseUniquePersonalValues(db, context, body.properties);
      if (body.populationIds !== undefined) await ensurePopulations(db, workspaceId, body.populationIds);
      if (body.email !== undefined) await ensureEmailFree(db, workspaceId, body.email, personId);
      const at = now(context);
      const changes: Updateable<PeopleTable> = { updated_at: at };
      if (body.email !== undefined) changes.email = body.email;
      if (body.firstName !== undefined) changes.first_name = body.firstName;
      if (body.lastName !== undefined) changes.last_name = body.lastName;
      if (body.phone !== undefined) changes.phone = body.phone;
      if (body.additionalEmails !== undefined) changes.additional_emails = body.additionalEmails;
      if (body.additionalPhones !== undefined) changes.additional_phones = body.additionalPhones;
      if (body.properties !== undefined) {
        const checked = await checkPropertyValues(db, workspaceId, body.properties);
        const merged: Record<string, PropertyValue> = { ...existing.properties, ...checked.set };
        for (const id of checked.remove) delete merged[id];
        await claimUniqueValues(db, workspaceId, personId, checked.catalogue, merged);
        changes.properties = JSON.stringify(merged);
      }
      const row = await queries.updatePerson(db, workspaceId, personId, changes);
      if (body.populationIds !== undefined) await queries.replaceMemberships(db, workspaceId, personId, [...new Set(body.populationIds)], at);
      // The event names what was given, never a value: a receiver reads the person with a token that may see them.
      const fields = [
        ...(['email', 'firstName', 'lastName', 'phone', 'additionalEmails', 'additionalPhones', 'populationIds'] as const).filter((field) => body[field] !== undefined),
        ...Object.keys(body.properties ?? {}).map((propertyId) => `properties.${propertyId}`),
      ];
      if (fields.length > 0) await recordEvents(db, workspaceId, [{ type: 'person.updated', data: { personId, fields, actor } }], at);
      return presentOne(context, db, row);
    }),
  );
}

/**
 * Deletes people: hidden at once from every read (deleted_at), their unique values and email free
 * again, and their personal data erased in the same transaction, every family's copy of it
 * (erasure.ts). Returns how many live people it deleted.
 */
export async function deletePeople(context: CallContext, match: DeletePeopleBody): Promise<{ personsDeletedCount: number }> {
  const { workspaceId } = context;
  // The count deleted by email would say whether each email was someone's.
  if ((match.emails?.length ?? 0) > 0) refuseLookupByPersonalData(context, 'Deleting people by email');
  return inTransaction(context.db, async (db) => {
    const at = now(context);
    const deleted = await queries.softDeletePeople(db, workspaceId, match, at);
    await releaseUniqueValues(db, workspaceId, deleted);
    // Their personal data goes now, every family's copy of it (erasure.ts); the purge vacuums the old row versions.
    await erasePeople(db, workspaceId, deleted);
    await recordEvents(db, workspaceId, deleted.map((personId) => ({ type: 'person.deleted', data: { personId } })), at);
    return { personsDeletedCount: deleted.length };
  });
}

export async function deletePerson(context: CallContext, personId: string): Promise<{ personsDeletedCount: number }> {
  const result = await deletePeople(context, { personIds: [personId] });
  if (result.personsDeletedCount === 0) throw notFound('Person', ['personId']);
  return result;
}

export interface OptedOutStatus {
  personId: string;
  email: string;
  isOptedOut: boolean;
}

function presentOptedOut(context: CallContext, row: PersonRow): OptedOutStatus {
  return { personId: row.person_id, email: maskEmail(row.email ?? '', context.canReadPersonalData), isOptedOut: row.is_opted_out };
}

/**
 * Sets the opted-out flag and with it the contact status: opting out makes the person
 * OPTED_OUT; opting back in makes them CONTACTABLE again. Setting the flag it already has
 * changes nothing (not even the time of the last contact-status change).
 */
async function setOptedOutOf(context: CallContext, db: Kysely<DB>, row: PersonRow, isOptedOut: boolean): Promise<PersonRow> {
  if (row.is_opted_out === isOptedOut) return row;
  const at = now(context);
  const updated = await queries.updatePerson(db, context.workspaceId, row.person_id, {
    is_opted_out: isOptedOut,
    contact_status: isOptedOut ? 'OPTED_OUT' : 'CONTACTABLE',
    contact_status_updated_at: at,
    updated_at: at,
  });
  await recordEvents(db, context.workspaceId, [{ type: isOptedOut ? 'person.opted_out' : 'person.opted_in', data: { personId: row.person_id } }], at);
  return updated;
}

/** PUT /people/{personIdOrEmail}/opted-out: addressed as E18 is, by id or by email. */
export async function setOptedOut(context: CallContext, personIdOrEmail: string, isOptedOut: boolean): Promise<OptedOutStatus> {
  if (EMAIL.test(personIdOrEmail)) refuseLookupByPersonalData(context, 'Addressing a person by email');
  return inTransaction(context.db, async (db) => {
    const row = await findByIdOrEmail(db, context.workspaceId, personIdOrEmail, true);
    if (!row) throw notFound('Person', ['personIdOrEmail']);
    return presentOptedOut(context, await setOptedOutOf(context, db, row, isOptedOut));
  });
}

/**
 * Opts a live person out in the caller's transaction, as PUT /people/{id}/opted-out does (the
 * contact status, the `person.opted_out` event): the unsubscribe link of a message calls this.
 * Answers whether the person was opted in until now; undefined when there is no live person.
 */
export async function optOutWithin(context: Pick<CallContext, 'clock' | 'workspaceId' | 'canReadPersonalData'>, transaction: Kysely<DB>, personId: string): Promise<boolean | undefined> {
  const row = await queries.findPersonById(transaction, context.workspaceId, personId, { forUpdate: true });
  if (!row) return undefined;
  if (row.is_opted_out) return false;
  await setOptedOutOf({ ...context, db: transaction }, transaction, row, true);
  return true;
}

/** E23: the same change, addressed by email. */
export async function setOptedOutByEmail(context: CallContext, email: string, isOptedOut: boolean): Promise<OptedOutStatus> {
  refuseLookupByPersonalData(context, 'Addressing a person by email');
  return inTransaction(context.db, async (db) => {
    const row = await queries.findPersonByEmail(db, context.workspaceId, email, { forUpdate: true });
    if (!row) throw notFound('Person', ['email']);
    return presentOptedOut(context, await setOptedOutOf(context, db, row, isOptedOut));
  });
}

/** A syntactically valid email address (the same test the request schemas' `format: email` applies in spirit). */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function findByIdOrEmail(db: Kysely<DB>, workspaceId: string, personIdOrEmail: string, forUpdate: boolean) {
  return EMAIL.test(personIdOrEmail)
    ? queries.findPersonByEmail(db, workspaceId, personIdOrEmail, { forUpdate })
    : queries.findPersonById(db, workspaceId, personIdOrEmail, { forUpdate });
}

/** E18: by person id, or by email when the value is a valid email address. */
export async function getOptedOut(context: CallContext, personIdOrEmail: string): Promise<OptedOutStatus> {
  if (EMAIL.test(personIdOrEmail)) refuseLookupByPersonalData(context, 'Looking a person up by email');
  const row = await findByIdOrEmail(context.db, context.workspaceId, personIdOrEmail, false);
  if (!row) throw notFound('Person', ['personIdOrEmail']);
  return presentOptedOut(context, row);
}

/** E15: the person's email and opted-out flag. */
export async function getOptedOutByEmail(context: CallContext, email: string): Promise<{ email: string; optedOut: boolean }> {
  refuseLookupByPersonalData(context, 'Looking a person up by email');
  const row = await queries.findPersonByEmail(context.db, context.workspaceId, email);
  if (!row) throw notFound('Person', ['email']);
  return { email: maskEmail(row.email ?? '', context.canReadPersonalData), optedOut: row.is_opted_out };
}

/**
 * POST /populations/{id}/members: each live person of the list joins (already a member is
 * fine); an unknown or deleted person is an error item naming its index.
 */
export async function addPopulationMembers(context: CallContext, populationId: string, personIds: readonly string[]) {
  const { workspaceId } = context;
  return inTransaction(context.db, async (db) => {
    const populations = await findPopulationIds(db, workspaceId, [populationId]);
    if (!populations.has(populationId)) throw notFound('Population', ['populationId']);
    const live = await queries.findLivePersonIds(db, workspaceId, [...new Set(personIds)]);
    const added = new Set<string>();
    const errors: { message: string; path: string[] }[] = [];
    personIds.forEach((personId, index) => {
      if (live.has(personId)) added.add(personId);
      else errors.push({ message: 'Person not found', path: ['personIds', String(index)] });
    });
    await queries.addMembers(db, workspaceId, populationId, [...added], now(context));
    return { added: [...added], errors };
  });
}

/**
 * The live person an address belongs to (case-insensitively), for the person's own sign-in page:
 * their id and whether they opted out, or undefined. Never answered to the caller of the page.
 */
export async function findPersonOfEmail(db: Kysely<DB>, workspaceId: string, email: string): Promise<{ personId: string; email: string } | undefined> {
  const row = await queries.findPersonByEmail(db, workspaceId, email);
  return row && row.email !== null ? { personId: row.person_id, email: row.email } : undefined;
}

/** The live person's address, or undefined (deleted, or none held). */
export async function findLivePersonEmail(db: Kysely<DB>, workspaceId: string, personId: string): Promise<string | undefined> {
  return (await queries.findPersonById(db, workspaceId, personId))?.email ?? undefined;
}

/**
 * The writes of people rows (and their unique-value claims in person_unique_values) that other
 * families make. The people family is the only code that writes those tables: signups and imports
 * call this module instead of writing them themselves, so whatever must stay in step with a write
 * of a person (the unique-value claims and updated_at today; the search layout and an outbox row
 * next) is kept here, in one place, and happens in the caller's transaction. one-writer.test.ts
 * holds the rule: it fails when code outside src/families/people/ writes either table.
 */
import { type Kysely, sql, type Updateable } from 'kysely';
import { JsonbBytes } from '../../db/jsonb-bytes.js';
import type { DB, PeopleTable, PropertyValue } from '../../db/schema.js';
import { idPrefixes, newId } from '../../ids.js';
import * as queries from './queries.js';
import { checkPropertyValue, claimFreeUniqueValues, loadPropertyCatalogue, type PropertyCatalogue, uniqueValueKey } from './values.js';

/** Every write here joins its caller's transaction; one given the bare database is a bug. */
function assertTransaction(transaction: Kysely<DB>) {
  if (!transaction.isTransaction) throw new Error('People are written in the transaction of the change: pass a transaction');
}

/** A person as a public signup form offers it: values already checked against the catalogue. */
export interface OfferedPerson {
  email: string;
  firstName?: string;
  lastName?: string;
  phone?: string;
  /** Checked values (checkPropertyValues' `set`). */
  properties: Record<string, PropertyValue>;
  catalogue: PropertyCatalogue;
}

/**
 * Creates the person of this email, or fills the live person who has it (case-insensitively),
 * and answers the person's id. Filling only fills what is empty: a first name, last name or phone
 * only where none is held, a property only where it is unset; the email, the opted-out status and
 * every held value stay as they are. A unique property's value that another person holds is left
 * out rather than refused. A new person gets `importSource`. Runs in the caller's transaction (the
 * person found is locked FOR UPDATE until it ends); a race on the email index, with a request
 * creating the same email meanwhile, surfaces as that index's violation (isEmailRace).
 */
export async function createOrFillPerson(transaction: Kysely<DB>, workspaceId: string, person: OfferedPerson, options: { at: string; importSource: string }): Promise<{ personId: string; created: boolean }> {
  assertTransaction(transaction);
  const db = transaction;
  const { at } = options;
  const existing = await queries.findPersonByEmail(db, workspaceId, person.email, { forUpdate: true });
  const personId = existing?.person_id ?? newId(idPrefixes.person);

  // Only values for properties the person has no value for; of those, only unique ones that are free.
  const held = existing?.properties ?? {};
  const offered: Record<string, PropertyValue> = {};
  for (const [propertyId, value] of Object.entries(person.properties)) if (held[propertyId] === undefined) offered[propertyId] = value;

  if (existing) {
    const taken = await claimFreeUniqueValues(db, workspaceId, personId, person.catalogue, offered);
    for (const propertyId of taken) delete offered[propertyId];
    const changes: Updateable<PeopleTable> = {};
    if (existing.first_name === null && person.firstName !== undefined) changes.first_name = person.firstName;
    if (existing.last_name === null && person.lastName !== undefined) changes.last_name = person.lastName;
    if (existing.phone === null && person.phone !== undefined) changes.phone = person.phone;
    if (Object.keys(offered).length > 0) changes.properties = JSON.stringify({ ...held, ...offered });
    if (Object.keys(changes).length > 0) await queries.updatePerson(db, workspaceId, personId, { ...changes, updated_at: at });
  } else {
    // The claims need the person's row (their foreign key), so the values go in after it.
    await insertNewPerson(db, workspaceId, personId, { email: person.email, firstName: person.firstName, lastName: person.lastName, phone: person.phone, importSource: options.importSource }, at);
    const taken = await claimFreeUniqueValues(db, workspaceId, personId, person.catalogue, offered);
    for (const propertyId of taken) delete offered[propertyId];
    if (Object.keys(offered).length > 0) await queries.updatePerson(db, workspaceId, personId, { properties: JSON.stringify(offered) });
  }
  return { personId, created: existing === undefined };
}

/**
 * A person's own answers (a screener question mapped to a property) written to their properties:
 * an answer replaces the value held, as the person's latest word. Values are checked against the
 * catalogue as it is now: a property deleted since the screener was defined, or a value that no
 * longer fits (an option removed), is left out, as is a unique value another person holds (the
 * person is not told who). Answers the property ids written. In the caller's transaction.
 */
export async function writeAnsweredValues(transaction: Kysely<DB>, workspaceId: string, personId: string, values: Record<string, unknown>, at: string): Promise<string[]> {
  assertTransaction(transaction);
  const ids = Object.keys(values);
  if (ids.length === 0) return [];
  const person = await queries.findPersonById(transaction, workspaceId, personId, { forUpdate: true });
  if (!person) return [];
  const catalogue = await loadPropertyCatalogue(transaction, workspaceId, ids, { forShare: true });
  const fitting: Record<string, PropertyValue> = {};
  for (const id of ids) {
    const property = catalogue.get(id);
    // A choice's label matches an option's name ignoring case (as the screener's definition was checked).
    const optionNamed = (label: unknown) => (typeof label === 'string' ? (property?.optionNames.find((name) => name.toLowerCase() === label.toLowerCase()) ?? label) : label);
    const value = Array.isArray(values[id]) ? (values[id] as unknown[]).map(optionNamed) : optionNamed(values[id]);
    const checked = property ? checkPropertyValue(property, value) : undefined;
    if (checked?.ok) fitting[id] = checked.value;
  }
  const changedUnique = new Map([...catalogue].filter(([id, property]) => property.isUnique && fitting[id] !== undefined && (person.properties[id] === undefined || uniqueValueKey(fitting[id]!) !== uniqueValueKey(person.properties[id]!))));
  if (changedUnique.size > 0) {
    await transaction.deleteFrom('person_unique_values').where('workspace_id', '=', workspaceId).where('person_id', '=', personId).where('property_id', 'in', [...changedUnique.keys()]).execute();
    const taken = await claimFreeUniqueValues(transaction, workspaceId, personId, changedUnique, fitting);
    for (const id of taken) {
      delete fitting[id];
      // The value held stays, and so does its claim.
      const held = person.properties[id];
      if (held !== undefined) await claimFreeUniqueValues(transaction, workspaceId, personId, new Map([[id, catalogue.get(id)!]]), { [id]: held });
    }
  }
  const written = Object.keys(fitting);
  if (written.length > 0) await queries.updatePerson(transaction, workspaceId, personId, { properties: JSON.stringify({ ...person.properties, ...fitting }), updated_at: at });
  return written;
}

/** The fields a new person starts with; the rest of the row starts empty. */
export interface NewPerson {
  email: string;
  firstName?: string | null;
  lastName?: string | null;
  phone?: string | null;
  additionalEmails?: string[];
  additionalPhones?: string[];
  /** Checked values, by property id. */
  properties?: Record<string, PropertyValue>;
  importSource?: string | null;
}

/** Inserts a new person's row (the one insert of a single person: the people service's and a signup's). */
export function insertNewPerson(db: Kysely<DB>, workspaceId: string, personId: string, person: NewPerson, at: string) {
  return queries.insertPerson(db, {
    workspace_id: workspaceId,
    person_id: personId,
    email: person.email,
    first_name: person.firstName ?? null,
    last_name: person.lastName ?? null,
    phone: person.phone ?? null,
    additional_emails: person.additionalEmails ?? [],
    additional_phones: person.additionalPhones ?? [],
    properties: JSON.stringify(person.properties ?? {}),
    contact_status_updated_at: null,
    import_source: person.importSource ?? null,
    last_import_id: null,
    imported_at: null,
    created_at: at,
    updated_at: at,
    deleted_at: null,
    purged_at: null,
  });
}

/** One person of an import batch: the batch's rows of one email, merged (later cells win). */
export interface PersonUpsert {
  /** The email lower-cased: how emails are compared. */
  emailKey: string;
  email: string;
  firstName?: string;
  lastName?: string;
  phone?: string;
  /** Checked values to set. */
  properties: Record<string, PropertyValue>;
}

export interface UpsertPeopleBatchOptions {
  /** The workspace's person properties, as the import resolved its header. */
  catalogue: PropertyCatalogue;
  /** The import writing (last_import_id, and import_source CSV_IMPORT of a new person). */
  importId: string;
  /** The population every upserted person joins, when the import names one. */
  populationId: string | null;
  /** The time of the write: created_at, updated_at, imported_at and added_at. */
  at: string;
}

/**
 * An upsert on its way through the batch: who it turned out to be, or why it is refused. (One
 * object of one shape per upsert: copying the upserts, of shapes as varied as their rows, cost
 * the import measurable CPU.)
 */
interface Pending {
  upsert: PersonUpsert;
  /** The person's id: a new one, or (when unique values were checked) the live person's of this email. */
  personId: string;
  failure: string | undefined;
}

/**
 * Upserts a batch of people by email, set-based (a handful of statements whatever the batch's
 * size), in the caller's transaction: a new email inserts a person (import source CSV_IMPORT), a
 * live person's email updates the fields given (a value given replaces the one held; one not
 * given stays), stamping last_import_id, imported_at and updated_at. Unique-property values are
 * claimed; an upsert whose value another person holds, or an earlier upsert of the batch takes, is
 * refused and written not at all. Every written person joins `populationId` (skipped if that
 * population is gone). Answers, for each upsert in order, why it was refused, or undefined when
 * it was written. Emails must be distinct within a batch (merge rows of one email first).
 */
export async function upsertPeopleBatch(transaction: Kysely<DB>, workspaceId: string, upserts: readonly PersonUpsert[], options: UpsertPeopleBatchOptions): Promise<(string | undefined)[]> {
  assertTransaction(transaction);
  const { catalogue } = options;
  // Only unique-property values need to know, before anything is written, who each email is:
  // whether the value's holder is this very person. Other batches go straight to the upsert.
  const uniqueIds = uniquePropertyIds(catalogue);
  const claimsUnique = upserts.some((upsert) => uniqueIds.some((id) => upsert.properties[id] !== undefined));
  const byEmail = claimsUnique ? await lockPeopleByEmail(transaction, workspaceId, upserts.map((upsert) => upsert.emailKey)) : undefined;
  const all: Pending[] = upserts.map((upsert) => ({ upsert, personId: byEmail?.get(upsert.emailKey) ?? newId(idPrefixes.person), failure: undefined }));
  if (claimsUnique) await checkUniqueValues(transaction, workspaceId, catalogue, all);
  await writePeople(
    transaction,
    workspaceId,
    options,
    all.filter((pending) => pending.failure === undefined),
  );
  return all.map((pending) => pending.failure);
}

/**
 * Takes fresh planner statistics of the tables an import with unique properties looks people and
 * claims up in, as the import grows them: after the first batch, then each time this run has
 * doubled what it wrote (a handful of times in a million rows; the two columns that matter only).
 * Without them, or with statistics from before this workspace's rows went in, the planner judges
 * this workspace's rows too few to matter and may read them all through another index for each of
 * a batch's emails (lockPeopleByEmail): the import then slows quadratically. Autovacuum would come
 * too late for an import, and the embedded store has none.
 */
export async function refreshPeopleStatistics(db: Kysely<DB>) {
  await sql`analyze people (workspace_id, deleted_at)`.execute(db);
  await sql`analyze person_unique_values (workspace_id)`.execute(db);
}

/**
 * The live people of these (lower-cased) emails, locked, by email: one probe per email (a lateral
 * subquery), which the unique email index answers. As `lower(email) in (...)`, the planner, short
 * of statistics on a table an import grows, read the workspace's rows whole through another index
 * for each batch. Per email it may still pick another index leading with workspace_id when it
 * judges the workspace's rows as few as one: refreshPeopleStatistics keeps that judgement current.
 */
async function lockPeopleByEmail(db: Kysely<DB>, workspaceId: string, emailKeys: string[]): Promise<Map<string, string>> {
  const { rows } = await sql<{ email_key: string; person_id: string }>`
    select e.email_key, p.person_id
    from jsonb_array_elements_text(${JSON.stringify(emailKeys)}::jsonb) as e(email_key)
    cross join lateral (
      select person_id from people
      where workspace_id = ${workspaceId} and deleted_at is null and email_key = e.email_key
      limit 1
      for update
    ) p
  `.execute(db);
  return new Map(rows.map((row) => [row.email_key, row.person_id]));
}

/**
 * Marks the upserts whose unique-property values another person holds, or an earlier upsert of
 * the batch takes, as failed. The claims' primary key still settles a race with a request that
 * claims the same value meanwhile: the batch's transaction then fails and the job retries it.
 */
async function checkUniqueValues(db: Kysely<DB>, workspaceId: string, catalogue: PropertyCatalogue, upserts: Pending[]) {
  const uniqueIds = uniquePropertyIds(catalogue);
  if (uniqueIds.length === 0) return;
  const wanted = upserts.flatMap((pending) =>
    uniqueIds.filter((id) => pending.upsert.properties[id] !== undefined).map((id) => ({ pending, propertyId: id, valueKey: uniqueValueKey(pending.upsert.properties[id]!) })),
  );
  if (wanted.length === 0) return;
  const held = await db
    .selectFrom('person_unique_values')
    .where('workspace_id', '=', workspaceId)
    .where(
      sql<boolean>`(property_id, value_key) in (select x.property_id, x.value_key from jsonb_to_recordset(${JSON.stringify(wanted.map((claim) => ({ property_id: claim.propertyId, value_key: claim.valueKey })))}::jsonb) as x(property_id text, value_key text))`,
    )
    .select(['property_id', 'value_key', 'person_id'])
    .execute();
  const holders = new Map(held.map((claim) => [`${claim.property_id}\u0000${claim.value_key}`, claim.person_id]));
  for (const claim of wanted) {
    if (claim.pending.failure !== undefined) continue;
    const key = `${claim.propertyId}\u0000${claim.valueKey}`;
    const holder = holders.get(key);
    if (holder !== undefined && holder !== claim.pending.personId) {
      claim.pending.failure = `${catalogue.get(claim.propertyId)!.name}: another person already has this value of a unique property`;
      continue;
    }
    holders.set(key, claim.pending.personId);
  }
  // An upsert that failed on a later claim may have taken an earlier key in `holders`; later rows
  // of this batch are then refused for a value nobody ends up holding. Rare, and reported per row.
}

const uniquePropertyIds = (catalogue: PropertyCatalogue) => [...catalogue.values()].filter((property) => property.isUnique).map((property) => property.propertyId);

/**
 * Upserts the batch's people by email, in one statement (peopleUpsert), then the unique claims
 * and population memberships, for the people as they came out.
 */
async function writePeople(db: Kysely<DB>, workspaceId: string, options: UpsertPeopleBatchOptions, pendings: Pending[]) {
  if (pendings.length === 0) return;
  const { importId, catalogue, at: now } = options;
  const upserts = pendings.map((pending) => pending.upsert);
  const records = pendings.map(({ upsert, personId }) => ({
    person_id: personId,
    email: upsert.email,
    first_name: upsert.firstName ?? null,
    last_name: upsert.lastName ?? null,
    phone: upsert.phone ?? null,
    properties: upsert.properties,
  }));
  const uniqueIds = new Set(uniquePropertyIds(catalogue));
  const claimsUnique = upserts.some((upsert) => Object.keys(upsert.properties).some((propertyId) => uniqueIds.has(propertyId)));
  // The people's ids are needed only for their unique claims and population memberships.
  const needsIds = claimsUnique || options.populationId !== null;
  const { rows: written } = await sql<{ person_id: string; email_key: string }>`
    ${peopleUpsert(workspaceId, importId, now, JSON.stringify(records))}
    ${needsIds ? sql`returning person_id, email_key` : sql``}
  `.execute(db);
  const personIds = new Map(written.map((row) => [row.email_key, row.person_id]));
  const personOf = (upsert: PersonUpsert) => {
    const personId = personIds.get(upsert.emailKey);
    if (personId === undefined) throw new Error('An upserted person did not come back from the upsert');
    return personId;
  };

  const claims = !claimsUnique ? [] : upserts.flatMap((upsert) =>
    Object.entries(upsert.properties)
      .filter(([propertyId]) => uniqueIds.has(propertyId))
      .map(([propertyId, value]) => ({ person_id: personOf(upsert), property_id: propertyId, value_key: uniqueValueKey(value) })),
  );
  if (claims.length > 0) {
    const json = JSON.stringify(claims);
    await sql`
      delete from person_unique_values u
      using jsonb_to_recordset(${json}::jsonb) as r(person_id text, property_id text, value_key text)
      where u.workspace_id = ${workspaceId} and u.person_id = r.person_id and u.property_id = r.property_id
    `.execute(db);
    await sql`
      insert into person_unique_values (workspace_id, property_id, value_key, person_id)
      select ${workspaceId}, r.property_id, r.value_key, r.person_id
      from jsonb_to_recordset(${json}::jsonb) as r(person_id text, property_id text, value_key text)
    `.execute(db);
  }
  if (options.populationId !== null) {
    // A population deleted while the import ran is skipped, not a failed batch.
    await sql`
      insert into population_members (workspace_id, population_id, person_id, added_at)
      select ${workspaceId}, ${options.populationId}, r.person_id, ${now}
      from jsonb_array_elements_text(${JSON.stringify(upserts.map(personOf))}::jsonb) as r(person_id)
      where exists (select 1 from populations where workspace_id = ${workspaceId} and population_id = ${options.populationId})
      on conflict do nothing
    `.execute(db);
  }
}

/** A person of some workspace, and when something happened to them. */
export interface PersonAt {
  workspaceId: string;
  personId: string;
  at: string;
}

const personArrays = (items: readonly PersonAt[]) => sql`unnest(${items.map((item) => item.workspaceId)}::text[], ${items.map((item) => item.personId)}::text[], ${items.map((item) => item.at)}::timestamptz[]) as x (workspace_id, person_id, at)`;

/**
 * Contacts made by messages delivered (src/families/messages/): each person's last contact moves
 * to the latest of theirs unless a later contact is already recorded. One statement for a batch
 * of any workspaces, in the caller's transaction.
 */
export async function recordContacts(transaction: Kysely<DB>, contacts: readonly PersonAt[]): Promise<void> {
  assertTransaction(transaction);
  if (contacts.length === 0) return;
  await sql`
    update people p set last_contact_at = greatest(p.last_contact_at, c.at)
    from (select workspace_id, person_id, max(at) as at from ${personArrays(contacts)} group by workspace_id, person_id) c
    where p.workspace_id = c.workspace_id and p.person_id = c.person_id and (p.last_contact_at is null or p.last_contact_at < c.at)
  `.execute(transaction);
}

/**
 * People whose address a mail server refused for good (a hard bounce): CONTACTABLE becomes
 * UNREACHABLE. An opted-out person stays OPTED_OUT (their choice outranks the bounce), and opting
 * back in makes them CONTACTABLE again. Answers the people it changed.
 */
export async function markUnreachable(transaction: Kysely<DB>, bounces: readonly PersonAt[]): Promise<PersonAt[]> {
  assertTransaction(transaction);
  if (bounces.length === 0) return [];
  const result = await sql<{ workspace_id: string; person_id: string; at: string }>`
    update people p set contact_status = 'UNREACHABLE', contact_status_updated_at = b.at, updated_at = b.at
    from (select workspace_id, person_id, max(at) as at from ${personArrays(bounces)} group by workspace_id, person_id) b
    where p.workspace_id = b.workspace_id and p.person_id = b.person_id and p.contact_status = 'CONTACTABLE' and p.deleted_at is null
    returning p.workspace_id, p.person_id, b.at
  `.execute(transaction);
  return result.rows.map((row) => ({ workspaceId: row.workspace_id, personId: row.person_id, at: row.at }));
}

/**
 * The import's upsert of people by email, from a jsonb array of records: a new email inserts a
 * person, a live person's email updates the fields the record fills. The unique email index
 * settles which, as the arbiter of ON CONFLICT: no lookup to plan, and an API request creating the
 * same email meanwhile is waited for and then updated rather than failing the batch.
 */
function peopleUpsert(workspaceId: string, importId: string, now: string, records: string | JsonbBytes) {
  return sql`
    insert into people (workspace_id, person_id, email, first_name, last_name, phone, properties, import_source, last_import_id, imported_at, created_at, updated_at)
    select ${workspaceId}, r.person_id, r.email, r.first_name, r.last_name, r.phone, r.properties, 'CSV_IMPORT', ${importId}, ${now}, ${now}, ${now}
    from jsonb_to_recordset(${records}::jsonb)
      as r(person_id text, email text, first_name text, last_name text, phone text, properties jsonb)
    on conflict (workspace_id, email_key) where deleted_at is null do update set
      first_name = coalesce(excluded.first_name, people.first_name),
      last_name = coalesce(excluded.last_name, people.last_name),
      phone = coalesce(excluded.phone, people.phone),
      properties = people.properties || excluded.properties,
      last_import_id = excluded.last_import_id,
      imported_at = excluded.imported_at,
      updated_at = excluded.updated_at
  `;
}

/** The version byte of jsonb's binary format, which JsonbBytes begins with. */
const JSONB_VERSION = 1;

/**
 * An import batch's people whose file names no unique property, written as each row is checked:
 * each person's record goes at once into bytes outside V8's heap, and the row's objects die
 * young. Held as objects until the batch committed, the rows of the batch being committed and of
 * the one being parsed meanwhile outlived the young generation and were promoted, a kilobyte or
 * two per row, and V8 let the old generation grow to four times what was live before collecting
 * it (issue 12: the import's peak RSS).
 *
 * A batch may hold an email twice (any case). One statement cannot upsert a person twice, so a
 * repeated email starts the next statement, which updates the person the earlier one wrote: the
 * same person in the end as one upsert of the rows merged (later cells win; properties merge).
 */
export class PeopleRecords {
  private buffer: Buffer;
  private length = 0;
  /** Each statement's parameter: where its bytes start (the version byte) and end. */
  private readonly ranges: number[] = [];
  private start = -1;
  /** Hashes of the current statement's emails: a collision only starts a statement early. */
  private readonly emails = new HashSet32();
  /** Hashes of every email of the batch: a collision only makes a batch wait for another. */
  private readonly batchEmails = new HashSet32();
  /** People (rows) added. */
  count = 0;

  constructor(initialBytes = 1024 * 1024) {
    this.buffer = Buffer.allocUnsafe(initialBytes);
  }

  add(upsert: PersonUpsert): void {
    const hash = emailHash(upsert.emailKey);
    if (this.start >= 0 && this.emails.has(hash)) this.close();
    const record = JSON.stringify({
      person_id: newId(idPrefixes.person),
      email: upsert.email,
      first_name: upsert.firstName ?? null,
      last_name: upsert.lastName ?? null,
      phone: upsert.phone ?? null,
      properties: upsert.properties,
    });
    // Room for the record in UTF-8 (at most three bytes a UTF-16 unit), its separator and the
    // closing bracket, and the opening of a statement.
    this.reserve(record.length * 3 + 4);
    if (this.start < 0) {
      this.start = this.length;
      this.buffer[this.length++] = JSONB_VERSION;
      this.buffer[this.length++] = 0x5b; // [
    } else {
      this.buffer[this.length++] = 0x2c; // ,
    }
    this.length += this.buffer.write(record, this.length, 'utf8');
    this.emails.add(hash);
    this.batchEmails.add(hash);
    this.count++;
  }

  /** Whether the two batches may hold an email in common (any case): false when they surely do not. */
  sharesEmailWith(other: PeopleRecords): boolean {
    const [smaller, larger] = this.batchEmails.size <= other.batchEmails.size ? [this, other] : [other, this];
    return smaller.batchEmails.some((hash) => larger.batchEmails.has(hash));
  }

  /** The parameters of the batch's statements, in order. */
  parameters(): JsonbBytes[] {
    if (this.start >= 0) this.close();
    const parameters: JsonbBytes[] = [];
    for (let index = 0; index < this.ranges.length; index += 2) parameters.push(new JsonbBytes(this.buffer.subarray(this.ranges[index], this.ranges[index + 1])));
    return parameters;
  }

  /** Empties the batch, keeping its bytes for the next one. */
  clear(): void {
    this.length = 0;
    this.ranges.length = 0;
    this.start = -1;
    this.emails.clear();
    this.batchEmails.clear();
    this.count = 0;
  }

  private close() {
    this.reserve(1);
    this.buffer[this.length++] = 0x5d; // ]
    this.ranges.push(this.start, this.length);
    this.start = -1;
    this.emails.clear();
  }

  private reserve(bytes: number) {
    if (this.length + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + bytes));
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }
}

/** FNV-1a over the email's UTF-16 units, never 0 (HashSet32's empty slot). */
function emailHash(emailKey: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < emailKey.length; index++) hash = Math.imul(hash ^ emailKey.charCodeAt(index), 0x01000193);
  return hash === 0 ? 1 : hash;
}

/**
 * A set of non-zero 32-bit numbers in one typed array, reused from batch to batch (open
 * addressing, linear probing, at most half full). A Set of a batch's thousands of hashes grew
 * by reallocating its table, each one then promoted to the old generation of V8's heap.
 */
class HashSet32 {
  private slots = new Int32Array(1 << 10);
  private entries = 0;

  /** Values held. */
  get size(): number {
    return this.entries;
  }

  /** Whether any value held passes `test`. */
  some(test: (value: number) => boolean): boolean {
    for (const value of this.slots) if (value !== 0 && test(value)) return true;
    return false;
  }

  has(value: number): boolean {
    const mask = this.slots.length - 1;
    for (let index = value & mask; ; index = (index + 1) & mask) {
      const held = this.slots[index]!;
      if (held === (value | 0)) return true;
      if (held === 0) return false;
    }
  }

  add(value: number): void {
    if (2 * (this.entries + 1) > this.slots.length) this.grow();
    const mask = this.slots.length - 1;
    for (let index = value & mask; ; index = (index + 1) & mask) {
      const held = this.slots[index]!;
      if (held === (value | 0)) return;
      if (held === 0) {
        this.slots[index] = value;
        this.entries++;
        return;
      }
    }
  }

  clear(): void {
    if (this.entries === 0) return;
    this.slots.fill(0);
    this.entries = 0;
  }

  private grow() {
    const old = this.slots;
    this.slots = new Int32Array(old.length * 2);
    this.entries = 0;
    for (const value of old) if (value !== 0) this.add(value);
  }
}

/**
 * Upserts an import batch's people (PeopleRecords: no unique-property values), one statement per
 * run of distinct emails, in the caller's transaction, with the same effect as upsertPeopleBatch
 * (which a file naming a unique property goes through). Every person written joins
 * `populationId`, in the same statement (skipped if that population is gone).
 */
export async function upsertPeopleRecords(transaction: Kysely<DB>, workspaceId: string, records: PeopleRecords, options: Omit<UpsertPeopleBatchOptions, 'catalogue'>): Promise<void> {
  assertTransaction(transaction);
  const { importId, populationId, at: now } = options;
  for (const parameter of records.parameters()) {
    const upsert = peopleUpsert(workspaceId, importId, now, parameter);
    if (populationId === null) {
      await upsert.execute(transaction);
      continue;
    }
    await sql`
      with written as (${upsert} returning person_id)
      insert into population_members (workspace_id, population_id, person_id, added_at)
      select ${workspaceId}, ${populationId}, w.person_id, ${now}
      from written w
      where exists (select 1 from populations where workspace_id = ${workspaceId} and population_id = ${populationId})
      on conflict do nothing
    `.execute(transaction);
  }
}

import type { Kysely } from 'kysely';
import type { DB, OptionColor, PropertyType } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { badRequest, type ErrorItem, notFound } from '../../http/errors.js';
import { idPrefixes, newId } from '../../ids.js';
import { removePropertyValues } from '../people/queries.js';
import { createPropertyStatistics } from '../../search/property-statistics.js';
import { findPopulationIds } from '../populations/queries.js';
import * as queries from './queries.js';
import { type CreatePropertyGroupBody, type ImportItem, type UpdatePropertyBody, optionColors, selectTypes, uniquePropertiesMax, uniqueableTypes } from './schemas.js';
import type { CallContext as SharedCallContext } from '../../context.js';

export type CallContext = Pick<SharedCallContext, 'db' | 'clock' | 'workspaceId' | 'userId'>;

/** The name of the group a property goes to when its import names none. */
export const defaultGroupName = 'General';

const now = (context: CallContext) => context.clock.now().toISOString();

function presentProperty(record: queries.PropertyRecord) {
  const { options, ...property } = record;
  return {
    ...property,
    propertyOptions: options.map((option) => ({ propertyOptionId: option.propertyOptionId, name: option.name, color: option.color, order: String(option.position) })),
  };
}

function presentGroup(record: queries.GroupRecord) {
  const { populations, properties, ...group } = record;
  return { ...group, populationIds: populations.map((population) => population.id), propertyIds: properties.map((property) => property.id) };
}

/** The color an option without one gets: the palette in turn, so neighbouring options differ. */
export const defaultColor = (position: number): OptionColor => optionColors[position % optionColors.length]!;

const isSelectType = (type: PropertyType) => (selectTypes as readonly string[]).includes(type);
const canBeUnique = (type: PropertyType) => (uniqueableTypes as readonly string[]).includes(type);

export interface ImportError extends ErrorItem {
  name: string;
}

interface AcceptedItem {
  item: ImportItem;
  propertyId: string;
}

/**
 * E4: the items are taken in order, each checked against the workspace as the earlier items of
 * the request left it (names, the unique-property limit). An item that breaks a rule is reported
 * in `errors`, once for each rule, and not created; the others are created in one transaction.
 */
export async function importProperties(context: CallContext, items: ImportItem[]) {
  const bulkActionUserRequestId = newId(idPrefixes.bulkActionRequest);
  const { workspaceId } = context;
  return inTransaction(context.db, async (db) => {
    await queries.lockPropertyCatalogue(db, workspaceId);
    const foldedNames = await queries.foldCase(db, items.map((item) => item.name));
    const taken = await queries.findTakenNames(db, workspaceId, foldedNames);
    const foldedOptionNames = await queries.foldCase(db, items.flatMap((item) => (item.propertyOptions ?? []).map((option) => option.name)));
    const knownGroups = await queries.findGroupIds(db, workspaceId, [...new Set(items.flatMap((item) => item.propertyGroupId ?? []))]);
    let uniqueCount = await queries.countUniqueProperties(db, workspaceId);

    const errors: ImportError[] = [];
    const accepted: AcceptedItem[] = [];
    const namesOfRequest = new Set<string>();
    let optionCursor = 0;
    items.forEach((item, index) => {
      const fail = (message: string, ...path: string[]) => errors.push({ message, path: [String(index), ...path], name: item.name });
      const errorsBefore = errors.length;
      const options = item.propertyOptions ?? [];
      const foldedOptions = foldedOptionNames.slice(optionCursor, optionCursor + options.length);
      optionCursor += options.length;
      const folded = foldedNames[index]!;

      if (taken.has(folded)) fail('A property with this name already exists', 'name');
      else if (namesOfRequest.has(folded)) fail('An earlier item of this request has this name', 'name');
      if (options.length > 0 && !isSelectType(item.propertyType)) {
        fail('propertyOptions are allowed only for SINGLE_SELECT and MULTI_SELECT properties', 'propertyOptions');
      } else {
        const seen = new Set<string>();
        foldedOptions.forEach((optionName, position) => {
          if (seen.has(optionName)) fail('An earlier option of this property has this name', 'propertyOptions', String(position), 'name');
          seen.add(optionName);
        });
      }
      if (item.isUnique) {
        if (!canBeUnique(item.propertyType)) fail('isUnique applies only to STRING, NUMBER and DATETIME properties', 'isUnique');
        else if (uniqueCount >= uniquePropertiesMax) fail(`A workspace can have at most ${uniquePropertiesMax} unique properties`, 'isUnique');
      }
      if (item.propertyGroupId !== undefined && !knownGroups.has(item.propertyGroupId)) fail('Property group not found', 'propertyGroupId');

      if (errors.length > errorsBefore) return;
      namesOfRequest.add(folded);
      if (item.isUnique) uniqueCount++;
      accepted.push({ item, propertyId: newId(idPrefixes.personProperty) });
    });

    if (accepted.length === 0) return { results: [], errors };
    const at = now(context);
    const defaultGroupId = accepted.some(({ item }) => item.propertyGroupId === undefined) ? await ensureDefaultGroup(db, workspaceId, at) : undefined;
    await queries.insertProperties(
      db,
      accepted.map(({ item, propertyId }) => ({
        workspace_id: workspaceId,
        property_id: propertyId,
        name: item.name,
        property_type: item.propertyType,
        is_unique: item.isUnique ?? false,
        is_phi: item.isPHI ?? false,
        is_pii: item.isPII ?? false,
        description: item.description ?? '',
        property_group_id: item.propertyGroupId ?? defaultGroupId!,
        editable_by_person: item.editableByPerson ?? false,
        created_by_user_id: context.userId,
        created_at: at,
        updated_at: at,
      })),
    );
    // The planner's statistics on the new properties' values, for search filters (src/search/property-statistics.ts).
    await createPropertyStatistics(db, accepted.map(({ item, propertyId }) => ({ propertyId, propertyType: item.propertyType })));
    await queries.insertOptions(
      db,
      accepted.flatMap(({ item, propertyId }) =>
        (item.propertyOptions ?? []).map((option, position) => ({
          workspace_id: workspaceId,
          option_id: newId(idPrefixes.propertyOption),
          property_id: propertyId,
          name: option.name,
          color: option.color ?? defaultColor(position),
          position,
        })),
      ),
    );

    const created = new Map((await queries.findProperties(db, workspaceId, accepted.map(({ propertyId }) => propertyId))).map((record) => [record.propertyId, record]));
    const results = accepted.map(({ propertyId }) => ({ personProperty: presentProperty(created.get(propertyId)!), isAsync: false, bulkActionUserRequestId }));
    return { results, errors };
  });
}

/** The workspace's default group (scope ALL), made on first use; the caller holds the catalogue lock. */
async function ensureDefaultGroup(db: Kysely<DB>, workspaceId: string, at: string): Promise<string> {
  const existing = await queries.findDefaultGroupId(db, workspaceId);
  if (existing) return existing;
  const propertyGroupId = newId(idPrefixes.propertyGroup);
  await queries.insertGroup(db, { workspaceId, propertyGroupId, name: defaultGroupName, scopeType: 'ALL', isDefault: true, createdAt: at, populationIds: [] });
  return propertyGroupId;
}

export async function listProperties(context: CallContext, propertyGroupId: string | undefined, afterPropertyId: string | undefined, size: number) {
  const { rows, total } = await queries.listProperties(context.db, context.workspaceId, propertyGroupId, afterPropertyId, size);
  return { rows: rows.slice(0, size).map(presentProperty), hasNextPage: rows.length > size, total };
}

/**
 * Deletes the properties that exist and, in the same transaction, their values from every
 * person (one set-based statement); their unique-value claims go with them by cascade. Their
 * planner statistics go later, in sweepPropertyStatistics (see why there).
 */
function deletePropertiesWithValues(context: CallContext, propertyIds: string[]) {
  return inTransaction(context.db, async (db) => {
    const deleted = await queries.deleteProperties(db, context.workspaceId, propertyIds);
    await removePropertyValues(db, context.workspaceId, [...deleted]);
    return deleted;
  });
}

export async function deleteProperty(context: CallContext, propertyId: string) {
  const deleted = await deletePropertiesWithValues(context, [propertyId]);
  if (!deleted.has(propertyId)) throw notFound('Property', ['propertyId']);
  return { message: 'Property deleted' };
}

/** E8: deletes the properties that exist in one statement; each id that does not is an error item. */
export async function deleteProperties(context: CallContext, propertyIds: string[]) {
  const deleted = await deletePropertiesWithValues(context, propertyIds);
  const errors: ErrorItem[] = [];
  propertyIds.forEach((propertyId, index) => {
    if (!deleted.has(propertyId)) errors.push({ message: 'Property not found', path: ['propertyIds', String(index)] });
  });
  return { deleted: propertyIds.filter((propertyId) => deleted.has(propertyId)), errors };
}

export async function listGroups(context: CallContext, populationId: string | undefined) {
  if (populationId !== undefined && !(await findPopulationIds(context.db, context.workspaceId, [populationId])).has(populationId)) {
    throw notFound('Population', ['populationId']);
  }
  const groups = await queries.findGroups(context.db, context.workspaceId, { populationId });
  return { results: groups.map(presentGroup) };
}

export async function listGroupProperties(context: CallContext, propertyGroupId: string, afterPropertyId: string | undefined, size: number) {
  if (!(await queries.findGroupIds(context.db, context.workspaceId, [propertyGroupId])).has(propertyGroupId)) {
    throw notFound('Property group', ['propertyGroupId']);
  }
  return listProperties(context, propertyGroupId, afterPropertyId, size);
}

/** A new group; the properties named move into it from the group they were in. */
export async function createGroup(context: CallContext, body: CreatePropertyGroupBody) {
  const populationIds = body.populationIds ?? [];
  const propertyIds = body.propertyIds ?? [];
  if (body.scopeType === 'SPECIFIC' && populationIds.length === 0) throw badRequest('A SPECIFIC group needs at least one population', ['populationIds']);
  if (body.scopeType === 'ALL' && populationIds.length > 0) {
    throw badRequest('A group with scope ALL applies to every population and takes no populationIds', ['populationIds']);
  }
  const { workspaceId } = context;
  return inTransaction(context.db, async (db) => {
    const populations = await findPopulationIds(db, workspaceId, populationIds);
    const missingPopulation = populationIds.findIndex((populationId) => !populations.has(populationId));
    if (missingPopulation !== -1) throw notFound('Population', ['populationIds', String(missingPopulation)]);
    const properties = await queries.lockProperties(db, workspaceId, propertyIds);
    const missingProperty = propertyIds.findIndex((propertyId) => !properties.has(propertyId));
    if (missingProperty !== -1) throw notFound('Property', ['propertyIds', String(missingProperty)]);

    const at = now(context);
    const propertyGroupId = newId(idPrefixes.propertyGroup);
    await queries.insertGroup(db, { workspaceId, propertyGroupId, name: body.name, scopeType: body.scopeType, isDefault: false, createdAt: at, populationIds });
    await queries.moveProperties(db, workspaceId, propertyIds, propertyGroupId, at);
    const [group] = await queries.findGroups(db, workspaceId, { propertyGroupId });
    return presentGroup(group!);
  });
}

/** PATCH /properties/{propertyId}: the fields given change (editableByPerson, description). */
export async function updateProperty(context: CallContext, propertyId: string, body: UpdatePropertyBody) {
  const { workspaceId } = context;
  return inTransaction(context.db, async (db) => {
    const changes: { editable_by_person?: boolean; description?: string } = {};
    if (body.editableByPerson !== undefined) changes.editable_by_person = body.editableByPerson;
    if (body.description !== undefined) changes.description = body.description;
    if (!(await queries.updateProperty(db, workspaceId, propertyId, changes, now(context)))) throw notFound('Property', ['propertyId']);
    const [record] = await queries.findProperties(db, workspaceId, [propertyId]);
    return presentProperty(record!);
  });
}

export interface EditableProperty {
  propertyId: string;
  name: string;
  description: string;
  propertyType: PropertyType;
  options: { propertyOptionId: string; name: string }[];
}

/** The properties the workspace lets a person edit on their own page (a LOCATION is not offered: its value is a structure, not a field). */
export async function editableByPerson(db: Kysely<DB>, workspaceId: string): Promise<EditableProperty[]> {
  const rows = await queries.findEditableByPerson(db, workspaceId);
  return rows
    .filter((row) => row.propertyType !== 'LOCATION')
    .map((row) => ({ propertyId: row.propertyId, name: row.name, description: row.description, propertyType: row.propertyType, options: row.options.map((option) => ({ propertyOptionId: option.propertyOptionId, name: option.name })) }));
}

/** Every property's id, name and type. */
export const propertyNames = (db: Kysely<DB>, workspaceId: string) => queries.findPropertyNames(db, workspaceId);

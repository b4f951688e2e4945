import type { CallContext as SharedCallContext } from '../../context.js';
import { inTransaction } from '../../db/transaction.js';
import { badRequest, notFound } from '../../http/errors.js';
import { idPrefixes, newId } from '../../ids.js';
import { MASKED_TEXT } from '../../http/masking.js';
import { computableName, loadCustomProperties, type PropertyDefinition } from '../../search/catalogue.js';
import { catalogue } from '../search-catalogue.js';
import { compileRootFilter, isGroup, namedPropertyIds } from '../../search/compile.js';
import type { Filter, FilterGroup, RootFilter } from '../../search/schemas.js';
import { segmentGroups, segmentMembershipPath } from './search-membership.js';
import { checkMemberships } from '../../search/run.js';
import { byPersonId } from '../people/search-target.js';
import * as queries from './queries.js';
import type { CreateSegmentBody, UpdateSegmentBody } from './schemas.js';

export type CallContext = Pick<SharedCallContext, 'db' | 'clock' | 'workspaceId' | 'userId' | 'canReadPersonalData'>;

export interface Segment {
  segmentId: string;
  name: string;
  description: string;
  filter: RootFilter;
  createdAt: string;
  updatedAt: string;
}

/**
 * Segments as responses. For a token without the personal-data right, the values compared with
 * personal data (emails, names, phones, properties flagged isPII or isPHI) read "***".
 */
async function present(context: CallContext, rows: readonly queries.SegmentRow[]): Promise<Segment[]> {
  const masking = rows.filter((row) => row.uses_personal_data && !context.canReadPersonalData);
  const customProperties =
    masking.length === 0 ? new Map<string, PropertyDefinition>() : await loadCustomProperties(context.db, context.workspaceId, [...new Set(masking.flatMap((row) => namedPropertyIds(row.filter as RootFilter, catalogue)))]);
  return rows.map((row) => {
    const filter = row.filter as RootFilter;
    return {
      segmentId: row.segment_id,
      name: row.name,
      description: row.description,
      filter: row.uses_personal_data && !context.canReadPersonalData ? maskPersonalValues(filter, customProperties) : filter,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  });
}

export function maskPersonalValues(filter: RootFilter, customProperties: ReadonlyMap<string, PropertyDefinition>): RootFilter {
  const personal = (item: Filter) => {
    const ref = item.property;
    const definition = 'propertyId' in ref ? customProperties.get(ref.propertyId) : computableName(catalogue, ref.propertyGroup, ref.propertyName);
    return definition?.personalData ?? false;
  };
  const mask = (items: (Filter | FilterGroup)[]): (Filter | FilterGroup)[] =>
    items.map((item) => (isGroup(item) ? { ...item, filters: mask(item.filters) } : item.value !== undefined && personal(item) ? { ...item, value: MASKED_TEXT } : item));
  return { ...filter, filters: mask(filter.filters) };
}

const presentOne = async (context: CallContext, row: queries.SegmentRow) => (await present(context, [row]))[0]!;

/**
 * A segment's filter is checked as a people search would check it, with the caller's rights:
 * PERSON names and custom properties, no sort (a segment is a set), no SEGMENT_MEMBERSHIP (a
 * segment cannot be defined by segments), ids of populations and studies that exist.
 */
async function checkFilter(context: CallContext, filter: RootFilter): Promise<{ usesPersonalData: boolean }> {
  if (filter.sort) throw badRequest('A segment is a set of people, without order: sort when you search', ['filter', 'sort']);
  const nested = segmentMembershipPath(filter);
  if (nested) throw badRequest('A segment cannot refer to segments', nested);
  const customProperties = await loadCustomProperties(context.db, context.workspaceId, namedPropertyIds(filter, catalogue));
  const compiled = compileRootFilter(filter, {
    catalogue,
    context: { workspaceId: context.workspaceId, now: context.clock.now() },
    canReadPersonalData: context.canReadPersonalData,
    customProperties,
    groups: segmentGroups,
    defaultSort: byPersonId,
  });
  await checkMemberships({ db: context.db, workspaceId: context.workspaceId }, compiled);
  return { usesPersonalData: compiled.readsPersonalData };
}

export async function createSegment(context: CallContext, body: CreateSegmentBody): Promise<Segment> {
  const { usesPersonalData } = await checkFilter(context, body.filter);
  const now = context.clock.now().toISOString();
  const row = await queries.insertSegment(context.db, {
    workspace_id: context.workspaceId,
    segment_id: newId(idPrefixes.segment),
    name: body.name,
    description: body.description ?? '',
    filter: JSON.stringify(body.filter),
    uses_personal_data: usesPersonalData,
    created_by_user_id: context.userId,
    created_at: now,
    updated_at: now,
  });
  return presentOne(context, row);
}

export async function getSegment(context: CallContext, segmentId: string): Promise<Segment> {
  const row = await queries.findSegment(context.db, context.workspaceId, segmentId);
  if (!row) throw notFound('Segment', ['segmentId']);
  return presentOne(context, row);
}

export async function updateSegment(context: CallContext, segmentId: string, body: UpdateSegmentBody): Promise<Segment> {
  return inTransaction(context.db, async (db) => {
    const existing = await queries.findSegment(db, context.workspaceId, segmentId, { forUpdate: true });
    if (!existing) throw notFound('Segment', ['segmentId']);
    const checked = body.filter === undefined ? undefined : await checkFilter({ ...context, db }, body.filter);
    const row = await queries.updateSegment(db, context.workspaceId, segmentId, {
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.description !== undefined ? { description: body.description } : {}),
      ...(body.filter !== undefined && checked ? { filter: JSON.stringify(body.filter), uses_personal_data: checked.usesPersonalData } : {}),
      updated_at: context.clock.now().toISOString(),
    });
    return presentOne({ ...context, db }, row);
  });
}

export async function deleteSegment(context: CallContext, segmentId: string): Promise<{ segmentId: string }> {
  if (!(await queries.deleteSegment(context.db, context.workspaceId, segmentId))) throw notFound('Segment', ['segmentId']);
  return { segmentId };
}

export async function listSegments(context: CallContext, afterSegmentId: string | undefined, size: number) {
  const { rows, total } = await queries.listSegments(context.db, context.workspaceId, afterSegmentId, size);
  return { rows: await present(context, rows.slice(0, size)), hasNextPage: rows.length > size, total };
}

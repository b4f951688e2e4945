import { sql } from 'kysely';
import type { Membership, PropertyDefinition } from '../../search/catalogue.js';
import { enumOptions, named } from '../../search/sql.js';
import { historyNames } from '../participants/search-history-names.js';
import { SEGMENT_MEMBERSHIP, segmentMembership } from '../segments/search-membership.js';

const column = (name: string) => () => sql.ref(`p.${name}`);
const ownRow = { countedFrom: 'person' } as const;

const core = named('PERSON');

const populationMembership: Membership = {
  ids: () => sql`select m.population_id from population_members as m where m.workspace_id = p.workspace_id and m.person_id = p.person_id`,
  check: {
    resource: 'Population',
    async existing(db, workspaceId, ids) {
      if (ids.length === 0) return new Set();
      const rows = await db.selectFrom('populations').where('workspace_id', '=', workspaceId).where('population_id', 'in', ids).select('population_id').execute();
      return new Set(rows.map((row) => row.population_id));
    },
  },
};

const populationMembershipName = (label: string, meaning: string) =>
  core(label, 'membership', meaning, (ctx) => sql`(select count(*) from (${populationMembership.ids(ctx)}) as s)`, { membership: populationMembership, notNull: true, countedFrom: 'person' });

/**
 * The PERSON names, each defined once: those the people row and its memberships determine here
 * (the segments matched are compiled by ../segments/search-membership.ts), and those derived from
 * participation history, contacts, incentives and signups (../participants/search-history-names.ts).
 * NAME is first and last name joined, as the Person response gives it.
 */
export const personNames: Record<string, PropertyDefinition> = {
  PERSON_ID: core('PERSON_ID', 'text', "the person's id", column('person_id'), { ...ownRow, notNull: true }),
  NAME: core('NAME', 'text', 'first and last name joined by a space, as the Person response gives it', () => sql`nullif(concat_ws(' ', nullif(p.first_name, ''), nullif(p.last_name, '')), '')`, { ...ownRow, personalData: true }),
  FIRST_NAME: core('FIRST_NAME', 'text', 'the first name', column('first_name'), { ...ownRow, personalData: true }),
  LAST_NAME: core('LAST_NAME', 'text', 'the last name', column('last_name'), { ...ownRow, personalData: true }),
  // Only a purged person has no email (people's check), and purged people are deleted: searches read live ones alone.
  EMAIL: core('EMAIL', 'email', 'the primary email (compared without regard to case)', column('email'), { ...ownRow, personalData: true, notNull: true, folded: column('email_key'), indexedOrder: true }),
  PHONE: core('PHONE', 'text', 'the primary phone', column('phone'), { ...ownRow, personalData: true }),
  IMPORT_SOURCE: core('IMPORT_SOURCE', 'text', 'how the person came in by import (CSV_IMPORT for a CSV file)', column('import_source'), ownRow),
  IMPORT_DATE: core('IMPORT_DATE', 'datetime', 'when an import last wrote the person', column('imported_at'), ownRow),
  IMPORT_UPLOAD_LIST: core('IMPORT_UPLOAD_LIST', 'text', 'the id of the import that last wrote the person', column('last_import_id'), ownRow),
  OPTED_OUT: core('OPTED_OUT', 'boolean', 'whether the person opted out', column('is_opted_out'), { ...ownRow, notNull: true }),
  CONTACT_STATUS: core('CONTACT_STATUS', 'enum', 'the contact status', column('contact_status'), { ...ownRow, options: enumOptions(['CONTACTABLE', 'OPTED_OUT', 'UNREACHABLE']), notNull: true }),
  CONTACT_STATUS_UPDATE_DATE: core('CONTACT_STATUS_UPDATE_DATE', 'datetime', 'when the contact status last changed', column('contact_status_updated_at'), ownRow),
  LAST_CHANGED_AT: core('LAST_CHANGED_AT', 'datetime', 'when the person was last changed', column('updated_at'), { ...ownRow, notNull: true, indexedOrder: true }),
  POPULATION_MEMBERSHIP: populationMembershipName('POPULATION_MEMBERSHIP', 'the populations the person belongs to (population ids; sorts by their number)'),
  SEGMENT_MEMBERSHIP: core(
    SEGMENT_MEMBERSHIP,
    'membership',
    "the segments (saved people filters, /segments) whose filter the person matches now (segment ids; sorts by their number)",
    (ctx) => sql`(select count(*) from (${segmentMembership.ids(ctx)}) as s)`,
    { membership: segmentMembership, notNull: true },
  ),
  PANEL_MEMBERSHIP: populationMembershipName('PANEL_MEMBERSHIP', 'the panels the person belongs to: a panel is a population, so this is POPULATION_MEMBERSHIP under another name'),
  ...historyNames,
};

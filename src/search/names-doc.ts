import { type Catalogue, isReferenceName, type PropertyDefinition, type ValueType } from './catalogue.js';
import { referenceNames, type PropertyGroup } from './names.js';

const typeWords: Record<ValueType, string> = {
  text: 'text',
  email: 'text (email)',
  number: 'number',
  datetime: 'date-time',
  boolean: 'boolean',
  enum: 'enum',
  select: 'single select',
  multiselect: 'multi select',
  membership: 'set',
  location: 'location',
};

/** One name as the document's `x-search-names` lists it: what a client (the console's filter builder) needs to offer it. */
export interface SearchNameEntry {
  name: string;
  type: ValueType;
  meaning?: string;
  /** enum: its values. */
  options?: string[];
}

/**
 * The names the service computes, per group, in a structure a client can read (the RootFilter
 * schema's `x-search-names`, generated into the SDK as `searchNames`), in the reference's order
 * and then the service's own. The description's tables say the same in words.
 */
export function searchNameEntries(catalogue: Catalogue): Record<PropertyGroup, SearchNameEntry[]> {
  const entries = {} as Record<PropertyGroup, SearchNameEntry[]>;
  for (const group of Object.keys(referenceNames) as PropertyGroup[]) {
    const computable = catalogue.names[group];
    const names = [...referenceNames[group], ...Object.keys(computable).filter((name) => !isReferenceName(group, name))];
    entries[group] = names.flatMap((name) => {
      const definition = Object.hasOwn(computable, name) ? computable[name] : undefined;
      if (!definition) return [];
      return [
        {
          name,
          type: definition.type,
          ...(definition.meaning ? { meaning: definition.meaning } : {}),
          ...(definition.type === 'enum' && definition.options ? { options: definition.options.map((option) => option.name) } : {}),
        },
      ];
    });
  }
  return entries;
}

const groupIntro: Record<PropertyGroup, string> = {
  PERSON: 'the person',
  PARTICIPANT: "the participant of the study searched (in a signup-submission search: the person's participant of `studyId`)",
  INCENTIVE: "the incentive searched; in a participant or submission search, the participant's (or person's) most recent incentive, empty when none",
};

function row(name: string, definition: PropertyDefinition): string {
  const values = definition.options && definition.type === 'enum' ? ` (${definition.options.map((option) => option.name).join(', ')})` : '';
  return `| ${name} | ${typeWords[definition.type]}${values} | ${definition.meaning ?? ''} |`;
}

/**
 * Every name of the reference's three lists, what it means and its type: the one place the
 * OpenAPI document defines them (the RootFilter schema's description). Names the service cannot
 * compute are listed as such.
 */
export function describePropertyNames(catalogue: Catalogue): string {
  const sections = (Object.keys(referenceNames) as PropertyGroup[]).map((group) => {
    const computable = catalogue.names[group];
    const rows = [...referenceNames[group], ...Object.keys(computable).filter((name) => !isReferenceName(group, name))].map((name) => {
      const definition = computable[name];
      return definition ? row(name, definition) : `| ${name} | — | not computed by this service (it keeps no population lists): refused with a 400 that says so |`;
    });
    return [`**${group}** names read ${groupIntro[group]}.`, '', '| name | type | meaning |', '|---|---|---|', ...rows].join('\n');
  });
  return [
    'Names a filter or sort may use, by `propertyGroup`. Counts and sums are 0 when there is nothing to count; windows (`_L30`, `_L90`, `_L365`, last year) are the last N×24 hours up to now by the service clock. ' +
      'Comparisons by type: text — EQUALS, NOT_EQUALS, CONTAINS, NOT_CONTAINS, STARTS_WITH, IN, NOT_IN; number — EQUALS, NOT_EQUALS, GREATER_THAN(_OR_EQUAL), LESS_THAN(_OR_EQUAL), BETWEEN; ' +
      'date-time — BEFORE, AFTER, ON, BETWEEN, IN_LAST_DAYS, NOT_IN_LAST_DAYS; boolean — IS_TRUE, IS_FALSE; enum and single select — IS_ANY_OF, IS_NONE_OF; multi select and set — HAS_ANY_OF, HAS_ALL_OF, HAS_NONE_OF (sets sort by their size); ' +
      'location — WITHIN_KM, COUNTRY_IS; every type — IS_EMPTY, IS_NOT_EMPTY. BETWEEN includes both bounds; reversed bounds (min above max, from after to) are a 400. ' +
      'Case: CONTAINS, NOT_CONTAINS and STARTS_WITH ignore case on every text (letters beyond ASCII fold as the database lowers them: É matches é); ' +
      'an email (PERSON.EMAIL, INCENTIVE.EMAIL) ignores case in every comparison; COUNTRY_IS ignores case; EQUALS, NOT_EQUALS, IN and NOT_IN on any other text, option names and enum values compare exactly. ' +
      'A mistake in a Filter (an unknown name or id, a comparison that does not fit the type, a value that does not fit the comparison) is a 400 with one error per Filter, whose `path` names the part and whose message says what is allowed there. ' +
      'docs/api/filters.md is a guide with examples.',
    ...sections,
  ].join('\n\n');
}

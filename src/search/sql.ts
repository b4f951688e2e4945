import { type RawBuilder, sql } from 'kysely';
import type { CompileContext, PropertyDefinition, SelectOption, ValueType } from './catalogue.js';
import type { PropertyGroup } from './names.js';

export const DAY_MS = 86_400_000;

/**
 * The maker of a group's catalogue names: `named('PERSON')('EMAIL', …)` is PERSON.EMAIL, not
 * personal data unless `extra` says so.
 */
export const named =
  (group: PropertyGroup) =>
  (label: string, type: ValueType, meaning: string, value: (ctx: CompileContext) => RawBuilder<unknown>, extra: Partial<PropertyDefinition> = {}): PropertyDefinition => ({
    label: `${group}.${label}`,
    type,
    personalData: false,
    value,
    meaning,
    ...extra,
  });

/** An instant as a timestamptz parameter. */
export const at = (date: Date) => sql`cast(${date.toISOString()} as timestamptz)`;

export const enumOptions = (values: readonly string[]): SelectOption[] => values.map((value) => ({ id: value, name: value }));

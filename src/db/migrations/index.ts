import type { Migration } from 'kysely';
import * as foundation from './20261122000000_foundation.js';

/** Every migration, in order. Names are timestamps so that branches merge without renumbering. */
export const migrations: Record<string, Migration> = {
  '20261122000000_foundation': foundation,
};

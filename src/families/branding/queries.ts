import type { Insertable, Kysely, Updateable } from 'kysely';
import type { BrandingConfigsTable, DB } from '../../db/schema.js';

type Executor = Kysely<DB>;

/** Every column but the logo's bytes: what the API answers is read without them. */
const columns = [
  'branding_config_id',
  'display_name',
  'accent_color',
  'logo_content_type',
  'logo_sha256',
  'logo_width',
  'logo_height',
  'logo_alt',
  'created_by_user_id',
  'created_at',
  'updated_at',
] as const;
/** The logo's size, computed by the database rather than read with the bytes. */
const withSize = (db: Executor) => db.fn<number | null>('octet_length', ['logo']).as('logo_bytes');

export async function insertConfig(db: Executor, row: Insertable<BrandingConfigsTable>) {
  await db.insertInto('branding_configs').values(row).execute();
}

export async function findConfig(db: Executor, workspaceId: string, brandingConfigId: string) {
  return db
    .selectFrom('branding_configs')
    .where('workspace_id', '=', workspaceId)
    .where('branding_config_id', '=', brandingConfigId)
    .select(columns)
    .select(withSize(db))
    .executeTakeFirst();
}
export type BrandingConfigRow = NonNullable<Awaited<ReturnType<typeof findConfig>>>;

/** Changes the given columns; undefined when the workspace has no such config. */
export async function updateConfig(db: Executor, workspaceId: string, brandingConfigId: string, changes: Updateable<BrandingConfigsTable>) {
  return db
    .updateTable('branding_configs')
    .set(changes)
    .where('workspace_id', '=', workspaceId)
    .where('branding_config_id', '=', brandingConfigId)
    .returning('branding_config_id')
    .executeTakeFirst();
}

export async function deleteConfig(db: Executor, workspaceId: string, brandingConfigId: string) {
  const result = await db.deleteFrom('branding_configs').where('workspace_id', '=', workspaceId).where('branding_config_id', '=', brandingConfigId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** A page of configs in the order they were made, after the keyset `afterId`, and the exact total. */
export async function listConfigs(db: Executor, workspaceId: string, afterId: string | undefined, size: number) {
  const [rows, count] = await Promise.all([
    db
      .selectFrom('branding_configs')
      .where('workspace_id', '=', workspaceId)
      .$if(afterId !== undefined, (query) => query.where('branding_config_id', '>', afterId!))
      .select(columns)
      .select(withSize(db))
      .orderBy('branding_config_id')
      .limit(size + 1)
      .execute(),
    db.selectFrom('branding_configs').where('workspace_id', '=', workspaceId).select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.total) };
}

/**
 * A logo's bytes by their hash, whichever workspace holds them (the same bytes are the same image):
 * read through the owner's handle, before any workspace is known, as a participant link's token is.
 */
export async function findLogoByHash(ownerDb: Executor, sha256: string) {
  return ownerDb
    .selectFrom('branding_configs')
    .where('logo_sha256', '=', sha256)
    .where('logo', 'is not', null)
    .select(['logo', 'logo_content_type'])
    .limit(1)
    .executeTakeFirst();
}

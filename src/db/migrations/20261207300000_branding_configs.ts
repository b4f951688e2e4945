import { type Kysely, sql } from 'kysely';

/**
 * Branding configs (src/families/branding/): how a workspace's participant pages look for the
 * studies that name one in `studyPlan.brandingConfigId` — the name shown instead of the
 * workspace's, an accent colour (checked for contrast by the service), and a logo kept here as its
 * bytes (PNG, JPEG or WebP of at most 256 KiB, checked by the service), with its type, size,
 * decoded dimensions and SHA-256. The pages serve the logo at a path named by that hash, looked up
 * before any workspace is known (the index on the hash alone, as the participant links' token).
 * Workspace-scoped with row-level security, as every tenant table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table branding_configs (
      workspace_id text not null references workspaces,
      branding_config_id text not null,
      display_name text not null,
      accent_color text check (accent_color ~ '^#[0-9a-f]{6}$'),
      logo bytea check (length(logo) <= 262144),
      logo_content_type text check (logo_content_type in ('image/png', 'image/jpeg', 'image/webp')),
      logo_sha256 text check (logo_sha256 ~ '^[0-9a-f]{64}$'),
      logo_width integer check (logo_width >= 1),
      logo_height integer check (logo_height >= 1),
      logo_alt text,
      created_by_user_id text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      primary key (workspace_id, branding_config_id),
      check ((logo is null) = (logo_sha256 is null) and (logo is null) = (logo_content_type is null) and (logo is null) = (logo_width is null) and (logo is null) = (logo_height is null))
    );
    create index branding_configs_logo on branding_configs (logo_sha256) where logo_sha256 is not null;
  `.execute(db);
  await sql`
    do $$
    begin
      execute format('alter table %I enable row level security', 'branding_configs');
      execute format(
        'create policy tenant_isolation on %I using (workspace_id = current_setting(%L, true)) with check (workspace_id = current_setting(%L, true))',
        'branding_configs', 'app.workspace_id', 'app.workspace_id');
    end
    $$;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table branding_configs`.execute(db);
}

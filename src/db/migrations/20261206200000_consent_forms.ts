import { type Kysely, sql } from 'kysely';

/**
 * Consent forms (src/families/consent-forms/): what a study asks people to sign, in versions.
 *
 * - `consent_forms` is the form as the team names it, and which version is current (the last
 *   published: versions are numbered 1, 2, … per form).
 * - `consent_form_versions` holds each version's content: title, Markdown body, required
 *   statements and optional choices (JSON arrays of `{id, text}`), language, and the SHA-256 of
 *   the canonical content. A consent submission names the version and that hash, so a version
 *   must never change once published: an update of a version row is refused by a trigger, not
 *   only by the API having no route for it.
 * - Both workspace-scoped with row-level security, as every tenant table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table consent_forms (
      workspace_id text not null references workspaces,
      consent_form_id text not null,
      name text not null,
      current_version integer not null check (current_version >= 1),
      created_by_user_id text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      primary key (workspace_id, consent_form_id)
    );
    create table consent_form_versions (
      workspace_id text not null,
      consent_form_id text not null,
      version integer not null check (version >= 1),
      title text not null,
      body text not null,
      required_statements jsonb not null,
      optional_choices jsonb not null,
      language text not null,
      content_sha256 text not null check (content_sha256 ~ '^[0-9a-f]{64}$'),
      created_by_user_id text not null,
      created_at timestamptz not null,
      primary key (workspace_id, consent_form_id, version),
      foreign key (workspace_id, consent_form_id) references consent_forms
    );
    create function consent_form_versions_immutable() returns trigger language plpgsql as $$
    begin
      raise exception 'consent form versions are immutable once published';
    end
    $$;
    create trigger consent_form_versions_immutable before update on consent_form_versions
      for each row execute function consent_form_versions_immutable();
  `.execute(db);
  await sql`
    do $$
    declare
      tenant_table text;
    begin
      foreach tenant_table in array array['consent_forms', 'consent_form_versions'] loop
        execute format('alter table %I enable row level security', tenant_table);
        execute format(
          'create policy tenant_isolation on %I using (workspace_id = current_setting(%L, true)) with check (workspace_id = current_setting(%L, true))',
          tenant_table, 'app.workspace_id', 'app.workspace_id');
      end loop;
    end
    $$;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table consent_form_versions;
    drop table consent_forms;
    drop function consent_form_versions_immutable();
  `.execute(db);
}

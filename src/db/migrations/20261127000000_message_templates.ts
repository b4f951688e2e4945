import { type Kysely, sql } from 'kysely';

/**
 * Message templates: per workspace, a subject, a text body and an optional HTML body in the
 * Liquid template language (src/families/messages/template-language.ts), checked against the
 * variable catalogue when saved. The sending of issue 11 (messages, their outbox and delivery)
 * joins this family with tables of its own; a message will name the template it was made from.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table message_templates (
      workspace_id text not null references workspaces,
      template_id text not null,
      name text not null,
      subject text not null,
      text_body text not null,
      html_body text,
      created_by_user_id text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      primary key (workspace_id, template_id)
    )
  `.execute(db);
  await sql`
    do $$
    declare
      tenant_table text;
    begin
      foreach tenant_table in array array['message_templates'] loop
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
  await sql`drop table message_templates`.execute(db);
}

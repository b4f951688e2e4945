import { type Kysely, sql } from 'kysely';

/**
 * Row-level security on every tenant table (every table with a workspace_id), binding the role
 * recruit_tenant that requests switch to (src/db/tenancy.ts). Roles belong to the whole cluster:
 * the role is created once, by whichever database migrates first, and several databases migrating
 * at once (tests) may race to create it. The migrating user needs CREATEROLE for that first time,
 * or an operator creates the role beforehand (README). Tables created later get the same policy
 * in their own migration; a test lists any tenant table without one.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    do $$
    begin
      if not exists (select from pg_roles where rolname = 'recruit_tenant') then
        begin
          create role recruit_tenant nologin;
        exception when duplicate_object or unique_violation then null;
        end;
      end if;
      if not exists (select from pg_roles where rolname = current_user and rolsuper) and not pg_has_role(current_user, 'recruit_tenant', 'member') then
        execute format('grant recruit_tenant to %I', current_user);
      end if;
    end
    $$;
  `.execute(db);
  await sql`
    do $$
    declare
      tenant_table record;
    begin
      for tenant_table in
        select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = current_schema() and c.relkind in ('r', 'p')
          and exists (select from pg_attribute a where a.attrelid = c.oid and a.attname = 'workspace_id' and not a.attisdropped)
      loop
        execute format('alter table %I enable row level security', tenant_table.relname);
        execute format(
          'create policy tenant_isolation on %I using (workspace_id = current_setting(%L, true)) with check (workspace_id = current_setting(%L, true))',
          tenant_table.relname, 'app.workspace_id', 'app.workspace_id');
      end loop;
    end
    $$;
  `.execute(db);
  await sql`grant usage on schema public to recruit_tenant`.execute(db);
  await sql`grant select, insert, update, delete on all tables in schema public to recruit_tenant`.execute(db);
  await sql`revoke all on service_secrets, kysely_migration, kysely_migration_lock from recruit_tenant`.execute(db);
  await sql`grant usage, select, update on all sequences in schema public to recruit_tenant`.execute(db);
  await sql`alter default privileges in schema public grant select, insert, update, delete on tables to recruit_tenant`.execute(db);
  await sql`alter default privileges in schema public grant usage, select, update on sequences to recruit_tenant`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    do $$
    declare
      tenant_table record;
    begin
      for tenant_table in select tablename from pg_policies where schemaname = current_schema() and policyname = 'tenant_isolation' loop
        execute format('drop policy tenant_isolation on %I', tenant_table.tablename);
        execute format('alter table %I disable row level security', tenant_table.tablename);
      end loop;
    end
    $$;
  `.execute(db);
  await sql`alter default privileges in schema public revoke all on tables from recruit_tenant`.execute(db);
  await sql`alter default privileges in schema public revoke all on sequences from recruit_tenant`.execute(db);
  await sql`revoke all on all tables in schema public from recruit_tenant`.execute(db);
  await sql`revoke all on all sequences in schema public from recruit_tenant`.execute(db);
  await sql`revoke usage on schema public from recruit_tenant`.execute(db);
}

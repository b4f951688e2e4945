import { type Kysely, sql } from 'kysely';

/**
 * People: the panel. Core fields are typed columns (they are filtered, sorted and counted);
 * custom property values live in `properties` (jsonb keyed by property id), the record read
 * back whole. Values of unique properties are also claimed in person_unique_values, whose
 * primary key enforces uniqueness per property.
 *
 * Deletion is two-step: `deleted_at` hides a person at once from every read, and the purge job
 * later erases their personal data (the row keeps its id, scrubbed, so history that refers to
 * it stays whole) and sets `purged_at`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table people (
      workspace_id text not null references workspaces,
      person_id text not null,
      email text,
      first_name text,
      last_name text,
      phone text,
      additional_emails text[] not null default '{}',
      additional_phones text[] not null default '{}',
      is_opted_out boolean not null default false,
      contact_status text not null default 'CONTACTABLE' check (contact_status in ('CONTACTABLE', 'OPTED_OUT', 'UNREACHABLE')),
      contact_status_updated_at timestamptz,
      properties jsonb not null default '{}',
      import_source text,
      last_import_id text,
      imported_at timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      deleted_at timestamptz,
      purged_at timestamptz,
      primary key (workspace_id, person_id),
      check (email is not null or purged_at is not null)
    );
    create unique index people_email_unique on people (workspace_id, lower(email)) where deleted_at is null;
    create index people_awaiting_purge on people (workspace_id, deleted_at) where deleted_at is not null and purged_at is null;

    create table person_unique_values (
      workspace_id text not null,
      property_id text not null,
      value_key text not null,
      person_id text not null,
      primary key (workspace_id, property_id, value_key),
      foreign key (workspace_id, property_id) references person_properties on delete cascade,
      foreign key (workspace_id, person_id) references people on delete cascade
    );
    create index person_unique_values_by_person on person_unique_values (workspace_id, person_id);

    create table population_members (
      workspace_id text not null,
      population_id text not null,
      person_id text not null,
      added_at timestamptz not null,
      primary key (workspace_id, population_id, person_id),
      foreign key (workspace_id, population_id) references populations on delete cascade,
      foreign key (workspace_id, person_id) references people on delete cascade
    );
    create index population_members_by_person on population_members (workspace_id, person_id, population_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table population_members, person_unique_values, people`.execute(db);
}

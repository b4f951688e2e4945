import { type Kysely, sql } from 'kysely';

/**
 * Person properties (the workspace's own fields on people), their select options, and the
 * property groups that say which populations see which properties. Every property is in exactly
 * one group; a property imported without one goes to the workspace's default group (scope ALL,
 * made the first time it is needed), so `propertyGroupId` is never null.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table property_groups (
      workspace_id text not null references workspaces,
      property_group_id text not null,
      name text not null,
      scope_type text not null check (scope_type in ('ALL', 'SPECIFIC')),
      is_default boolean not null default false,
      created_at timestamptz not null,
      primary key (workspace_id, property_group_id),
      check (not is_default or scope_type = 'ALL')
    );
    create unique index property_groups_one_default on property_groups (workspace_id) where is_default;

    create table property_group_populations (
      workspace_id text not null,
      property_group_id text not null,
      population_id text not null,
      primary key (workspace_id, property_group_id, population_id),
      foreign key (workspace_id, property_group_id) references property_groups on delete cascade,
      foreign key (workspace_id, population_id) references populations on delete cascade
    );
    create index property_group_populations_by_population on property_group_populations (workspace_id, population_id, property_group_id);

    create table person_properties (
      workspace_id text not null references workspaces,
      property_id text not null,
      name text not null,
      property_type text not null check (property_type in ('STRING', 'NUMBER', 'DATETIME', 'BOOLEAN', 'SINGLE_SELECT', 'MULTI_SELECT', 'LOCATION')),
      is_unique boolean not null default false,
      is_phi boolean not null default false,
      is_pii boolean not null default false,
      description text not null default '',
      property_group_id text not null,
      created_by_user_id text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      primary key (workspace_id, property_id),
      foreign key (workspace_id, property_group_id) references property_groups
    );
    create unique index person_properties_name_unique on person_properties (workspace_id, lower(name));
    create index person_properties_by_group on person_properties (workspace_id, property_group_id, property_id);

    create table property_options (
      workspace_id text not null,
      option_id text not null,
      property_id text not null,
      name text not null,
      color text not null check (color in ('GREEN', 'YELLOW', 'BLUE', 'GREY', 'RED', 'ORANGE', 'PURPLE', 'PINK')),
      position integer not null,
      primary key (workspace_id, option_id),
      foreign key (workspace_id, property_id) references person_properties on delete cascade
    );
    create unique index property_options_in_order on property_options (workspace_id, property_id, position);
    create unique index property_options_name_unique on property_options (workspace_id, property_id, lower(name));
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table property_options, person_properties, property_group_populations, property_groups;`.execute(db);
}

import { type Kysely, sql } from 'kysely';

/**
 * Planner statistics on the value of each custom property that already exists, as search filters
 * read it out of people.properties (new properties get theirs when created, and lose them when
 * deleted: src/search/property-statistics.ts, whose expression this repeats as it stood when
 * written). Without them the planner guesses that a filter on a jsonb expression keeps 0.5% of
 * people, and plans for a handful of matches where there are hundreds of thousands.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    do $$
    declare
      property record;
      kind text;
      reading text;
    begin
      for property in
        select property_id, property_type from person_properties where property_type in ('STRING', 'SINGLE_SELECT', 'NUMBER', 'BOOLEAN')
      loop
        kind := case property.property_type when 'NUMBER' then 'number' when 'BOOLEAN' then 'boolean' else 'string' end;
        reading := case property.property_type
          when 'NUMBER' then format('cast((properties ->> cast(%L as text)) as numeric)', property.property_id)
          when 'BOOLEAN' then format('cast((properties ->> cast(%L as text)) as boolean)', property.property_id)
          else format('(properties ->> cast(%L as text))', property.property_id)
        end;
        execute format('create statistics if not exists %I on ((case when jsonb_typeof((properties -> cast(%L as text))) = %L then %s end)) from people',
          'people_property_' || lower(property.property_id), property.property_id, kind, reading);
      end loop;
    end
    $$;
  `.execute(db);
  await sql`analyze people`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    do $$
    declare statistics record;
    begin
      for statistics in select stxname from pg_statistic_ext where stxname like 'people\\_property\\_%' loop
        execute format('drop statistics %I', statistics.stxname);
      end loop;
    end
    $$;
  `.execute(db);
}

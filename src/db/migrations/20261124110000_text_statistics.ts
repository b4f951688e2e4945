import { type Kysely, sql } from 'kysely';

/**
 * Planner statistics on the lowered value of each text property that already exists, as CONTAINS
 * and STARTS_WITH read it (new ones get theirs when created: src/search/property-statistics.ts,
 * whose expression this repeats as it stood when written). Nothing is dropped: a statistics object
 * dropped while other instances plan queries on people fails those queries.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    do $$
    declare
      property record;
    begin
      for property in select property_id from person_properties where property_type = 'STRING' loop
        execute format(
          'create statistics if not exists %I on (lower((case when jsonb_typeof((properties -> cast(%L as text))) = %L then (properties ->> cast(%L as text)) end))) from people',
          'people_property_' || lower(property.property_id) || '_lower', property.property_id, 'string', property.property_id);
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
      for statistics in select stxname from pg_statistic_ext where stxname like 'people\\_property\\_%\\_lower' loop
        execute format('drop statistics %I', statistics.stxname);
      end loop;
    end
    $$;
  `.execute(db);
}

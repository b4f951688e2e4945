import type { Compilable, CompiledQuery, Kysely } from 'kysely';

/** Parameter stand-ins while the statement is built: NUL never reaches PostgreSQL as text. */
const marker = (index: number) => `\u0000reusable-statement-parameter-${index}`;

/**
 * A statement whose SQL text is built and compiled once, then run with fresh parameter values.
 * Building a Kysely query with nested JSON aggregations costs tens of microseconds of CPU and
 * much garbage per call, more than PostgreSQL spends on a primary-key lookup; hot single-row
 * reads reuse their text instead. The statement's shape must not depend on the parameters:
 * each must reach the SQL as one bound value, or the first call throws.
 */
export function reusableStatement<DB, Params extends string[], Row>(
  build: (db: Kysely<DB>, ...params: Params) => Compilable<Row>,
): (db: Kysely<DB>, ...params: Params) => CompiledQuery<Row> {
  let template: { compiled: CompiledQuery<Row>; slots: (number | undefined)[] } | undefined;
  return (db, ...params) => {
    if (!template) {
      const markers = params.map((_, index) => marker(index)) as Params;
      const compiled = build(db, ...markers).compile();
      const slots = compiled.parameters.map((value) => {
        const index = markers.indexOf(value as string);
        return index === -1 ? undefined : index;
      });
      for (let index = 0; index < markers.length; index++) {
        if (!slots.includes(index)) throw new Error(`reusableStatement: parameter ${index} is not bound as a value of the statement`);
      }
      template = { compiled, slots };
    }
    const { compiled, slots } = template;
    return { ...compiled, parameters: compiled.parameters.map((value, position) => (slots[position] === undefined ? value : params[slots[position]!])) };
  };
}

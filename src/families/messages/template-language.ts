import type { Liquid, Template } from 'liquidjs';
import { badRequest } from '../../http/errors.js';

/**
 * The template language of messages: Liquid (LiquidJS), a sandboxed language made for templates
 * written by people who are not the service's developers. A template reads data, never code: no
 * file is ever read (`include`, `render` and `layout` are removed), and parsing and rendering have
 * limits of size and time, so a template cannot take the service down.
 *
 * Variables are a fixed catalogue: a template is parsed when saved and every variable it reads
 * from outside itself must be one of `variableCatalogue` (variables it makes with `assign`,
 * `capture` or `for` are its own). Filters are Liquid's standard ones (`default`, `upcase`, …),
 * less `raw`: the HTML body escapes every value it outputs, and nothing may turn that off.
 */

export interface VariableDescription {
  name: string;
  description: string;
  example: string;
}

export const variableCatalogue = [
  { name: 'person.firstName', description: "The person's first name; empty when unknown.", example: 'Ada' },
  { name: 'person.lastName', description: "The person's last name; empty when unknown.", example: 'Lovelace' },
  { name: 'person.fullName', description: 'First and last name, space-separated; empty when both are unknown.', example: 'Ada Lovelace' },
  { name: 'person.email', description: "The person's email.", example: 'ada@example.org' },
  { name: 'study.externalName', description: "The study's name as participants see it (its plan's `externalName`); empty when none, or no study.", example: 'Tell us about paying online' },
  { name: 'study.externalDescription', description: "The study's description as participants see it; empty when none, or no study.", example: 'A 30-minute video call about how you pay online.' },
  { name: 'workspace.name', description: "The workspace's name: the team the message comes from.", example: 'Acme Research' },
  { name: 'links.screener', description: "The person's link to the study's screener.", example: 'https://recruit.example.com/s/…' },
  { name: 'links.scheduling', description: "The person's link to schedule a session of the study.", example: 'https://recruit.example.com/b/…' },
  { name: 'links.unsubscribe', description: "The person's one-click unsubscribe link.", example: 'https://recruit.example.com/u/…' },
] as const satisfies readonly VariableDescription[];

export type VariableName = (typeof variableCatalogue)[number]['name'];

const knownVariables = new Set<string>(variableCatalogue.map((variable) => variable.name));

/** The values a template is rendered with: one object per catalogue root. */
export interface TemplateValues {
  person: { firstName: string; lastName: string; fullName: string; email: string };
  study: { externalName: string; externalDescription: string };
  workspace: { name: string };
  links: { screener: string; scheduling: string; unsubscribe: string };
}

export type TemplateField = 'subject' | 'textBody' | 'htmlBody';

/** Limits of a template's source, enforced by the request schemas (characters). */
export const sourceLengthMax: Record<TemplateField, number> = { subject: 500, textBody: 50_000, htmlBody: 200_000 };

function engine(Engine: typeof Liquid, escapeOutput: boolean): Liquid {
  const liquid = new Engine({
    // An in-memory file system with no files: nothing on disk is ever read.
    templates: {},
    strictFilters: true,
    // Rendering never fails on a value the catalogue leaves empty; saving refuses unknown names.
    strictVariables: false,
    ...(escapeOutput ? { outputEscape: 'escape' as const } : {}),
    // Characters parsed, milliseconds spent rendering, and characters or items allocated by loops and filters.
    parseLimit: 250_000,
    renderLimit: 1_000,
    memoryLimit: 10_000_000,
  });
  for (const tag of ['include', 'render', 'layout']) delete liquid.tags[tag];
  delete liquid.filters.raw;
  return liquid;
}

/**
 * LiquidJS (a few MiB resident) loads with the first template parsed, not at the service's start.
 * It is a CommonJS package: its `module.exports` is the namespace's `default` both under Node and
 * in the bundle `npm start` runs, where esbuild's chunk of it exports nothing else (named exports
 * taken from that chunk were undefined: "Engine is not a constructor").
 */
let engines: Promise<{ text: Liquid; html: Liquid }> | undefined;
const engineOf = async (field: TemplateField) => {
  engines ??= import('liquidjs').then(({ default: { Liquid } }) => ({ text: engine(Liquid, false), html: engine(Liquid, true) }));
  const loaded = await engines;
  return field === 'htmlBody' ? loaded.html : loaded.text;
};

/** LiquidJS ends its messages with ", line:1, col:5" (and the source line): kept as "(line 1, column 5)". */
function describeLiquidError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const [first = message] = message.split('\n');
  return first.replace(/, line:(\d+), col:(\d+)$/, ' (line $1, column $2)');
}

/**
 * Parses one field's source and checks every outside variable against the catalogue; a syntax
 * error or an unknown variable is a 400 whose path names the field.
 */
export async function parseTemplate(field: TemplateField, source: string): Promise<{ parsed: Template[]; variables: Set<VariableName> }> {
  const liquid = await engineOf(field);
  let parsed: Template[];
  try {
    parsed = liquid.parse(source);
  } catch (error) {
    throw badRequest(`${field} is not a valid template: ${describeLiquidError(error)}`, [field]);
  }
  let analysis;
  try {
    analysis = liquid.analyzeSync(parsed);
  } catch (error) {
    throw badRequest(`${field} is not a valid template: ${describeLiquidError(error)}`, [field]);
  }
  const used = new Set<VariableName>();
  for (const variables of Object.values(analysis.globals)) {
    for (const variable of variables) {
      const dynamic = variable.segments.some((segment) => typeof segment !== 'string');
      const name = dynamic ? String(variable) : variable.segments.join('.');
      if (!dynamic && knownVariables.has(name)) {
        used.add(name as VariableName);
        continue;
      }
      const where = variable.location ? ` (line ${variable.location.row}, column ${variable.location.col})` : '';
      throw badRequest(`${field} uses the unknown variable ${name}${where}; the variables are ${[...knownVariables].join(', ')}`, [field]);
    }
  }
  return { parsed, variables: used };
}

/** Renders a field checked by parseTemplate; the HTML body escapes every value it outputs. */
export async function renderTemplate(field: TemplateField, parsed: Template[], values: TemplateValues): Promise<string> {
  try {
    return await (await engineOf(field)).render(parsed, values);
  } catch (error) {
    // A limit reached, or a filter refusing its input (`divided_by: 0`): the template's fault, not the service's.
    throw badRequest(`${field} could not be rendered: ${describeLiquidError(error)}`, [field]);
  }
}

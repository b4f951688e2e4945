import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Liquid, Template } from 'liquidjs';
import { badRequest } from '../../http/errors.js';
import { createEngine, type RenderLimits } from './liquid-engine.js';
import type { RenderAnswer, RenderRequest } from './render-worker.js';

/**
 * The template language of messages: Liquid (LiquidJS), a sandboxed language made for templates
 * written by people who are not the service's developers. A template reads data, never code: no
 * file is ever read (`include`, `render` and `layout` are removed), and parsing and rendering have
 * limits of size and time (`renderBudget`), so a template cannot take the service down, nor hold up
 * other workspaces: renders run on a worker thread.
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
  { name: 'links.screener', description: "The person's own link to the study's screener (made when the message is sent; one per message).", example: 'https://recruit.example.com/p/…' },
  { name: 'links.consent', description: "The person's own link to sign the study's consent form (made when the message is sent; one per message).", example: 'https://recruit.example.com/p/…' },
  { name: 'links.scheduling', description: "The person's own link to book a session of the study, and later to see, move or cancel it (made when the message is sent; one per message).", example: 'https://recruit.example.com/p/…' },
  { name: 'links.unsubscribe', description: "The person's one-click unsubscribe link.", example: 'https://recruit.example.com/u/…' },
] as const satisfies readonly VariableDescription[];

export type VariableName = (typeof variableCatalogue)[number]['name'];

const knownVariables = new Set<string>(variableCatalogue.map((variable) => variable.name));

/** The values a template is rendered with: one object per catalogue root. */
export interface TemplateValues {
  person: { firstName: string; lastName: string; fullName: string; email: string };
  study: { externalName: string; externalDescription: string };
  workspace: { name: string };
  links: { screener: string; consent: string; scheduling: string; unsubscribe: string };
}

export type TemplateField = 'subject' | 'textBody' | 'htmlBody';

/** Limits of a template's source, enforced by the request schemas (characters). */
export const sourceLengthMax: Record<TemplateField, number> = { subject: 500, textBody: 50_000, htmlBody: 200_000 };

/**
 * The render budget: one field's render may take this long and allocate this much (characters or
 * items, by loops and filters) before it is stopped. Renders run on a worker thread (render-worker.ts),
 * so a render that spends its whole budget holds up that thread, never the event loop; and the
 * worker is ended if an answer is later than the budget and a grace. Saving a template renders it
 * with the catalogue's examples under half the budget (`saveShare`), so that real values, longer
 * than the examples, keep headroom; a template over that is refused with a 400 naming the field.
 */
export const renderBudget: RenderLimits & { saveShare: number; graceMilliseconds: number } = {
  milliseconds: 100,
  memory: 1_000_000,
  saveShare: 0.5,
  graceMilliseconds: 1_000,
};

/** The operator's TEMPLATE_RENDER_BUDGET_MS (config.ts), set once at the service's start. */
export function setRenderBudgetMilliseconds(milliseconds: number): void {
  renderBudget.milliseconds = milliseconds;
}

const describeBudget = (limits: RenderLimits) => `${limits.milliseconds} ms and ${limits.memory.toLocaleString('en-US')} characters allocated`;

/**
 * The main thread parses (to check a template) with the same engine; it never renders.
 * LiquidJS (a few MiB resident) loads with the first template parsed, not at the service's start.
 * It is a CommonJS package: its `module.exports` is the namespace's `default` both under Node and
 * in the bundle `npm start` runs, where esbuild's chunk of it exports nothing else (named exports
 * taken from that chunk were undefined: "Engine is not a constructor").
 */
let engines: Promise<{ text: Liquid; html: Liquid }> | undefined;
const engineOf = async (field: TemplateField) => {
  engines ??= import('liquidjs').then(({ default: { Liquid } }) => ({ text: createEngine(Liquid, false, renderBudget), html: createEngine(Liquid, true, renderBudget) }));
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


/**
 * Where the render worker's code is: beside this module when it runs from src/ (under tsx, as in
 * the tests) or from tsc's dist/families/messages/, and dist/render-worker.js in the bundle
 * `npm start` runs, whose chunks are in dist/chunks/.
 */
function newWorker(): Worker {
  if (import.meta.url.endsWith('.ts')) {
    // TypeScript sources (tests, `npm run dev`): the worker registers tsx's loader, then loads the module.
    const tsx = pathToFileURL(path.join(path.dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/esm/api/index.mjs')).href;
    const worker = new URL('./render-worker.ts', import.meta.url).href;
    return new Worker(`import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(worker)}); })`, { eval: true });
  }
  for (const relative of ['./render-worker.js', '../render-worker.js']) {
    const url = new URL(relative, import.meta.url);
    if (existsSync(fileURLToPath(url))) return new Worker(url);
  }
  throw new Error(`The template render worker (render-worker.js) is missing beside ${fileURLToPath(import.meta.url)}`);
}

interface RenderJob {
  request: Omit<RenderRequest, 'id'>;
  resolve: (answer: RenderAnswer) => void;
  reject: (error: unknown) => void;
}

/**
 * One worker thread renders, one job at a time; the queue is kept per workspace and served in turn,
 * so a workspace that queues many renders (a send to thousands of people, or previews in a loop)
 * delays its own next render, not another workspace's by more than one render. A render with no
 * answer within its budget and a grace ends the worker (a new one starts for the next job).
 */
class RenderPool {
  private worker: Worker | undefined;
  private ready: Promise<Worker> | undefined;
  private readonly queues = new Map<string, RenderJob[]>();
  private busy = false;
  private nextId = 1;

  render(key: string, request: Omit<RenderRequest, 'id'>): Promise<RenderAnswer> {
    return new Promise((resolve, reject) => {
      const queue = this.queues.get(key);
      if (queue) queue.push({ request, resolve, reject });
      else this.queues.set(key, [{ request, resolve, reject }]);
      void this.pump();
    });
  }

  private start(): Promise<Worker> {
    this.ready ??= new Promise<Worker>((resolve, reject) => {
      const worker = newWorker();
      worker.unref();
      const onReady = (message: { ready?: boolean }) => {
        if (!message.ready) return;
        worker.off('message', onReady);
        this.worker = worker;
        resolve(worker);
      };
      worker.on('message', onReady);
      worker.once('error', (error) => {
        this.discard(worker);
        reject(error);
      });
      worker.once('exit', () => this.discard(worker));
    });
    return this.ready;
  }

  private discard(worker: Worker): void {
    if (this.worker === worker || !this.worker) {
      this.worker = undefined;
      this.ready = undefined;
    }
  }

  /** The next job, taking workspaces in turn: the first queue's head, and that queue goes last. */
  private take(): RenderJob | undefined {
    for (const [key, queue] of this.queues) {
      const job = queue.shift();
      this.queues.delete(key);
      if (queue.length > 0) this.queues.set(key, queue);
      if (job) return job;
    }
    return undefined;
  }

  private async pump(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      for (let job = this.take(); job; job = this.take()) {
        try {
          job.resolve(await this.run(await this.start(), job.request));
        } catch (error) {
          job.reject(error);
        }
      }
    } finally {
      this.busy = false;
    }
  }

  private run(worker: Worker, request: Omit<RenderRequest, 'id'>): Promise<RenderAnswer> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        // The worker did not answer within the budget and the grace: it is ended, and the render is over budget.
        worker.off('message', onMessage);
        this.discard(worker);
        void worker.terminate();
        resolve({ id, error: 'template render limit exceeded', limit: true });
      }, request.limits.milliseconds + renderBudget.graceMilliseconds);
      const onMessage = (answer: RenderAnswer) => {
        if (answer.id !== id) return;
        clearTimeout(timer);
        worker.off('message', onMessage);
        resolve(answer);
      };
      worker.on('message', onMessage);
      worker.postMessage({ ...request, id } satisfies RenderRequest);
    });
  }
}

const pool = new RenderPool();

/**
 * Renders a field checked by parseTemplate, on the render worker within the render budget; the
 * HTML body escapes every value it outputs. `queue` is whose turn the render waits for (the
 * workspace). Over the budget, or a filter refusing its input (`divided_by: 0`), is a 400 naming
 * the field: the template's fault, not the service's.
 */
export async function renderTemplate(field: TemplateField, source: string, values: TemplateValues, queue = '', limits: RenderLimits = renderBudget): Promise<string> {
  const answer = await pool.render(queue, { source, escapeOutput: field === 'htmlBody', values, limits: { milliseconds: limits.milliseconds, memory: limits.memory } });
  if ('output' in answer) return answer.output;
  if (answer.limit) throw badRequest(`${field} exceeds the render budget of ${describeBudget(limits)}`, [field]);
  throw badRequest(`${field} could not be rendered: ${describeLiquidError(new Error(answer.error))}`, [field]);
}

/** The catalogue's examples: what a template is rendered with when saved. */
const exampleValues = (): TemplateValues => {
  const example = Object.fromEntries(variableCatalogue.map((variable) => [variable.name, variable.example])) as Record<VariableName, string>;
  return {
    person: { firstName: example['person.firstName'], lastName: example['person.lastName'], fullName: example['person.fullName'], email: example['person.email'] },
    study: { externalName: example['study.externalName'], externalDescription: example['study.externalDescription'] },
    workspace: { name: example['workspace.name'] },
    links: { screener: example['links.screener'], consent: example['links.consent'], scheduling: example['links.scheduling'], unsubscribe: example['links.unsubscribe'] },
  };
};

/**
 * A template being saved: parsed and checked (parseTemplate), then rendered with the catalogue's
 * examples under `saveShare` of the render budget; over it, a 400 naming the field and the budget.
 */
export async function checkTemplate(field: TemplateField, source: string, queue = ''): Promise<void> {
  await parseTemplate(field, source);
  const limits = { milliseconds: Math.max(1, Math.floor(renderBudget.milliseconds * renderBudget.saveShare)), memory: Math.floor(renderBudget.memory * renderBudget.saveShare) };
  try {
    await renderTemplate(field, source, exampleValues(), queue, limits);
  } catch (error) {
    if (error instanceof Error && /exceeds the render budget/.test(error.message)) {
      throw badRequest(`${field} exceeds the render budget: rendered with the variables' examples it must take at most ${describeBudget(limits)} (half the budget of ${describeBudget(renderBudget)}, leaving room for longer values)`, [field]);
    }
    // Other render faults (`divided_by: 0` on an example) are left to preview and sending, as before.
  }
}

import { parentPort } from 'node:worker_threads';
import type { Liquid as Engine, Template } from 'liquidjs';
import { createEngine, isLimitMessage, type RenderLimits } from './liquid-engine.js';

/**
 * The render worker: every template render runs here, off the main thread, so that a template
 * that loops for its whole budget holds up this thread, never the requests of other workspaces
 * (issue 32). Each render is bounded by LiquidJS's limits (time and allocation); the main thread
 * also ends this worker if an answer does not come within the budget and a grace (template-language.ts).
 * Built into dist/render-worker.js by scripts/bundle-server.mjs.
 */

export interface RenderRequest {
  id: number;
  source: string;
  escapeOutput: boolean;
  values: unknown;
  limits: RenderLimits;
}

export type RenderAnswer = { id: number; output: string } | { id: number; error: string; limit: boolean };

const port = parentPort;
if (!port) throw new Error('render-worker.ts runs as a worker thread');

// LiquidJS is CommonJS: in the bundle its chunk exports only `default` (module.exports); under
// Node's own loader (tsx, tsc's output) its ES module build exports `Liquid` by name.
const liquidjs = (await import('liquidjs')) as typeof import('liquidjs') & { default?: typeof import('liquidjs') };
const Liquid = liquidjs.default?.Liquid ?? liquidjs.Liquid;
const engines = new Map<string, Engine>();
const engineFor = (escapeOutput: boolean, limits: RenderLimits) => {
  const key = `${escapeOutput}:${limits.milliseconds}:${limits.memory}`;
  let engine = engines.get(key);
  if (!engine) engines.set(key, (engine = createEngine(Liquid, escapeOutput, limits)));
  return engine;
};
// Parsed sources, most recently used last: a send to many people parses its template once.
const parsedCache = new Map<string, Template[]>();

port.on('message', (request: RenderRequest) => {
  let answer: RenderAnswer;
  try {
    const engine = engineFor(request.escapeOutput, request.limits);
    const cacheKey = `${request.escapeOutput}:${request.source}`;
    let parsed = parsedCache.get(cacheKey);
    if (parsed) parsedCache.delete(cacheKey);
    else parsed = engine.parse(request.source);
    parsedCache.set(cacheKey, parsed);
    if (parsedCache.size > 50) parsedCache.delete(parsedCache.keys().next().value!);
    answer = { id: request.id, output: engine.renderSync(parsed, request.values as object) as string };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    answer = { id: request.id, error: message, limit: isLimitMessage(message) };
  }
  port.postMessage(answer);
});
port.postMessage({ ready: true });

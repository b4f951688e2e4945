import type { Liquid } from 'liquidjs';

/**
 * The one configuration of LiquidJS the service renders with, shared by the render worker
 * (render-worker.ts, where every render runs) and the main thread (where templates are parsed and
 * checked when saved). `limits` are the render budget: milliseconds spent rendering and characters
 * or items allocated by loops and filters (LiquidJS's renderLimit and memoryLimit).
 */
export interface RenderLimits {
  milliseconds: number;
  memory: number;
}

/** Characters of one field's source LiquidJS parses at most (the request schemas allow 200,000). */
export const parseLimit = 250_000;

export function createEngine(Engine: typeof Liquid, escapeOutput: boolean, limits: RenderLimits): Liquid {
  const liquid = new Engine({
    // An in-memory file system with no files: nothing on disk is ever read.
    templates: {},
    strictFilters: true,
    // Rendering never fails on a value the catalogue leaves empty; saving refuses unknown names.
    strictVariables: false,
    ...(escapeOutput ? { outputEscape: 'escape' as const } : {}),
    parseLimit,
    renderLimit: limits.milliseconds,
    memoryLimit: limits.memory,
  });
  for (const tag of ['include', 'render', 'layout']) delete liquid.tags[tag];
  delete liquid.filters.raw;
  return liquid;
}

/** LiquidJS's message when one of its limits stops a parse or a render ("template render limit exceeded"). */
export const isLimitMessage = (message: string) => /\blimit exceeded\b/.test(message);

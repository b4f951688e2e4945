import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The engine (src/search/) knows no family: it imports nothing from src/families/, and no import
 * cycle (`import type` included: it binds the modules as tightly for a reader) runs through it or
 * through a family's search files. Nor do the HTTP plumbing (src/http/) and the job runner
 * (src/jobs/) reach a family, even through another module: app.ts hands them what they need.
 * ESLint refuses the imports as they are written; this checks the whole graph, which a rule on
 * one file cannot see. Tests are left out: they may import what they exercise.
 */

const srcRoot = fileURLToPath(new URL('..', import.meta.url));
const relative = (file: string) => path.relative(srcRoot, file).split(path.sep).join('/');

type ImportGraph = Map<string, string[]>;

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

/** Every non-test file of src/ and the files of src/ it imports (imports, re-exports, dynamic imports), as paths relative to src/. */
function importGraph(): ImportGraph {
  const files = sourceFiles(srcRoot);
  const known = new Set(files.map(relative));
  const graph: ImportGraph = new Map();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles
      .map(({ fileName }) => fileName)
      .filter((specifier) => specifier.startsWith('.'))
      .map((specifier) => relative(path.resolve(path.dirname(file), specifier.replace(/\.js$/, '.ts'))))
      .filter((target) => known.has(target));
    graph.set(relative(file), [...new Set(targets)]);
  }
  return graph;
}

/** A shortest import path from `from` back to itself, or undefined when none. */
function cycleThrough(graph: ImportGraph, from: string): string[] | undefined {
  const cameFrom = new Map<string, string>();
  const queue = [...(graph.get(from) ?? [])];
  for (const next of queue) cameFrom.set(next, from);
  while (queue.length > 0) {
    const current = queue.shift()!;
    if (current === from) {
      const path = [from];
      for (let step = cameFrom.get(from)!; step !== from; step = cameFrom.get(step)!) path.unshift(step);
      return [from, ...path];
    }
    for (const next of graph.get(current) ?? []) {
      if (cameFrom.has(next)) continue;
      cameFrom.set(next, current);
      queue.push(next);
    }
  }
  return undefined;
}

/** Each cycle through a watched file, written `a.ts → b.ts → a.ts`. */
function cyclesThrough(graph: ImportGraph, watched: (file: string) => boolean): string[] {
  const seen = new Set<string>();
  const cycles: string[] = [];
  for (const file of [...graph.keys()].filter(watched).sort()) {
    if (seen.has(file)) continue;
    const cycle = cycleThrough(graph, file);
    if (!cycle) continue;
    cycle.forEach((member) => seen.add(member));
    cycles.push(cycle.join(' → '));
  }
  return cycles;
}

/** Each family file reachable from a watched file through imports, written `a.ts → b.ts → families/….ts` (a shortest path). */
function familiesReachedFrom(graph: ImportGraph, watched: (file: string) => boolean): string[] {
  const paths: string[] = [];
  for (const start of [...graph.keys()].filter(watched).sort()) {
    const cameFrom = new Map<string, string | undefined>([[start, undefined]]);
    const queue = [start];
    for (const current of queue) {
      for (const next of graph.get(current) ?? []) {
        if (cameFrom.has(next)) continue;
        cameFrom.set(next, current);
        if (next.startsWith('families/')) {
          const path = [next];
          for (let step = cameFrom.get(next); step !== undefined; step = cameFrom.get(step)) path.unshift(step);
          paths.push(path.join(' → '));
        } else queue.push(next);
      }
    }
  }
  return paths;
}

const inEngine = (file: string) => file.startsWith('search/');
const inPlumbing = (file: string) => file.startsWith('http/') || file.startsWith('jobs/');
const isFamilySearchFile = (file: string) => file.startsWith('families/') && path.posix.basename(file).startsWith('search');

describe('the search engine and the families', () => {
  const graph = importGraph();

  it('reads the source it checks', () => {
    expect(graph.get('search/run.ts')).toContain('search/compile.ts');
    expect([...graph.keys()].filter(isFamilySearchFile)).toContain('families/search-catalogue.ts');
  });

  it('has no engine file importing a family', () => {
    const imports = [...graph].filter(([file]) => inEngine(file)).flatMap(([file, targets]) => targets.filter((target) => target.startsWith('families/')).map((target) => `${file} → ${target}`));
    expect(imports).toEqual([]);
  });

  it('has no import cycle through the engine or a family search file', () => {
    expect(cyclesThrough(graph, (file) => inEngine(file) || isFamilySearchFile(file))).toEqual([]);
  });

  it('names the path of a cycle it finds', () => {
    const withCycle: ImportGraph = new Map([
      ['search/run.ts', ['search/compile.ts', 'families/people/search-target.ts']],
      ['search/compile.ts', []],
      ['families/people/search-target.ts', ['families/people/search-names.ts']],
      ['families/people/search-names.ts', ['search/run.ts']],
    ]);
    expect(cyclesThrough(withCycle, inEngine)).toEqual(['search/run.ts → families/people/search-target.ts → families/people/search-names.ts → search/run.ts']);
  });
});

describe('the HTTP plumbing, the job runner and the families', () => {
  const graph = importGraph();

  it('reads the source it checks', () => {
    expect(graph.get('app.ts')).toEqual(expect.arrayContaining(['http/auth.ts', 'jobs/runner.ts', 'families/jobs.ts']));
  });

  it('has no file of src/http/ or src/jobs/ that reaches a family, directly or through another module', () => {
    expect(familiesReachedFrom(graph, inPlumbing)).toEqual([]);
  });

  it('names the path by which a family is reached', () => {
    const reaching: ImportGraph = new Map([
      ['http/auth.ts', ['http/errors.ts', 'context.ts']],
      ['http/errors.ts', []],
      ['context.ts', ['families/users/queries.ts']],
      ['jobs/runner.ts', ['jobs/queue.ts']],
      ['jobs/queue.ts', []],
      ['families/users/queries.ts', ['http/errors.ts']],
    ]);
    expect(familiesReachedFrom(reaching, inPlumbing)).toEqual(['http/auth.ts → context.ts → families/users/queries.ts']);
  });
});

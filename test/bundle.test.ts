import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from './processes.js';

/**
 * What `npm start` runs (`dist/server.js`, built by scripts/bundle-server.mjs before the tests):
 * one bundle and its chunks, whose source maps name src/*.ts without carrying their text.
 */
const dist = path.join(projectRoot, 'dist');
const chunks = readdirSync(path.join(dist, 'chunks'));
const mapOf = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as { sources: string[]; sourcesContent?: unknown };

/**
 * The property names at the top level of an object pattern that starts at `from` (just after its
 * `{`): `a`, `b: c`, `default: { d, e }` give a, b and default.
 */
function topLevelNames(text: string, from: number): string[] {
  const names: string[] = [];
  let depth = 0;
  let current = '';
  for (let at = from; at < text.length; at++) {
    const character = text[at]!;
    if (character === '{') depth++;
    else if (character === '}' && depth === 0) break;
    else if (character === '}') depth--;
    else if (character === ',' && depth === 0) {
      names.push(current);
      current = '';
    } else if (depth === 0) current += character;
  }
  names.push(current);
  return names.map((part) => part.split(':')[0]!.trim()).filter(Boolean);
}

describe('the bundled server', () => {
  it('starts from an entry that loads only its own chunks, not tsc\'s modules', () => {
    const entry = readFileSync(path.join(dist, 'server.js'), 'utf8');
    const relative = [...entry.matchAll(/(?:\bfrom\s*|\bimport\(\s*)["'](\.{1,2}\/[^"']+)["']/g)].map((match) => match[1]!);
    expect(relative.length).toBeGreaterThan(0);
    expect(relative.filter((specifier) => !/^\.\/chunks\/[\w.-]+-[A-Z0-9]{8}\.js$/.test(specifier))).toEqual([]);
  });

  it('maps its code to src/*.ts, without the sources\' text', () => {
    const maps = [path.join(dist, 'server.js.map'), ...chunks.filter((name) => name.endsWith('.map')).map((name) => path.join(dist, 'chunks', name))].map(mapOf);
    const sources = maps.flatMap((map) => map.sources);
    expect(sources).toEqual(expect.arrayContaining(['../src/server.ts', '../../src/app.ts', '../../src/db/migrate.ts']));
    expect(maps.filter((map) => map.sourcesContent !== undefined)).toEqual([]);
  });

  it('takes from each chunk loaded on first use only the names that chunk exports', () => {
    // esbuild's chunk of a CommonJS package exports only `default` (its module.exports): a name
    // destructured from `import()` of it is undefined at run time ("Agent is not a constructor"),
    // while the sources, run by Node, see every name. Each dynamic import's destructured names
    // are checked against what its chunk exports.
    const exportsOf = (file: string): Set<string> => {
      const text = readFileSync(file, 'utf8');
      const names = new Set<string>();
      // The chunks are minified of whitespace: an export statement need not begin a line.
      if (/(?:^|[;}])\s*export default /m.test(text)) names.add('default');
      for (const [, list] of text.matchAll(/(?:^|[;}])\s*export\s*\{([^}]*)\};?/gm)) {
        for (const item of list!.split(',').map((part) => part.trim()).filter(Boolean)) names.add(item.split(/\s+as\s+/).pop()!);
      }
      return names;
    };
    const files = [path.join(dist, 'server.js'), ...chunks.filter((name) => name.endsWith('.js')).map((name) => path.join(dist, 'chunks', name))];
    const taken: string[] = [];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(/import\(\s*"(\.{1,2}\/[^"]+)"\s*\)\s*\.then\(\s*\(\s*\{/g)) {
        const target = path.resolve(path.dirname(file), match[1]!);
        const exported = exportsOf(target);
        for (const name of topLevelNames(text, match.index + match[0].length)) {
          taken.push(`${path.basename(target)} ${name}`);
          expect(exported.has(name), `${path.relative(dist, file)} takes "${name}" from ${path.relative(dist, target)}, which exports ${[...exported].join(', ') || 'nothing'}`).toBe(true);
        }
      }
    }
    // The check reads what it should: the chunks of LiquidJS and undici are taken from.
    expect(taken.some((entry) => /^liquid\.node-\w+\.js default$/.test(entry))).toBe(true);
    expect(taken.some((entry) => /^undici-\w+\.js default$/.test(entry))).toBe(true);
  });
});

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
});

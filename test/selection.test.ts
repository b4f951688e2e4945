import { describe, expect, it } from 'vitest';
import { excludedBy } from './selection.js';

/** CI's legs run what can differ between them (test/selection.ts): the import graph decides, not a list. */
describe('TEST_SELECTION', () => {
  it('runs every file by default', () => {
    expect(excludedBy(undefined)).toEqual([]);
    expect(excludedBy('all')).toEqual([]);
  });

  it('store: leaves out files that never reach the database, the browser tests and the compiled server\'s files (the compiled leg runs them on PostgreSQL); keeps every other file that opens a store', () => {
    const excluded = excludedBy('store');
    expect(excluded).toEqual(
      expect.arrayContaining(['src/search/counts/bitset.test.ts', 'test/engines.test.ts', 'test/console/filter-model.test.ts', 'test/console/studies.test.ts', 'test/participant/screener-journey.test.ts', 'test/compiled/every-operation.test.ts', 'test/docs-examples.test.ts']),
    );
    for (const kept of ['src/families/people/create-person.test.ts', 'test/console/serving.test.ts', 'src/http/fuzz.test.ts', 'src/participant/pages.test.ts']) expect(excluded).not.toContain(kept);
  });

  it('runtime: leaves out only the browser tests', () => {
    const excluded = excludedBy('runtime');
    expect(excluded.length).toBeGreaterThan(3);
    expect(excluded.every((file) => file.startsWith('test/console/') || file.startsWith('test/participant/'))).toBe(true);
    expect(excluded).not.toContain('test/console/filter-model.test.ts');
  });

  it('compiled: keeps only the files that drive the compiled server', () => {
    const excluded = new Set(excludedBy('compiled'));
    for (const kept of ['test/compiled/every-operation.test.ts', 'test/docs-examples.test.ts', 'test/sdk-walkthrough.test.ts', 'test/backup-restore.test.ts']) expect(excluded.has(kept), kept).toBe(false);
    for (const left of ['src/http/fuzz.test.ts', 'test/console/studies.test.ts', 'src/search/counts/bitset.test.ts']) expect(excluded.has(left), left).toBe(true);
  });

  it('embedded and compiled: together every file, each once', () => {
    const embedded = new Set(excludedBy('embedded'));
    const compiled = new Set(excludedBy('compiled'));
    expect(embedded.has('test/compiled/every-operation.test.ts')).toBe(true);
    expect(embedded.has('test/console/studies.test.ts')).toBe(false);
    expect([...embedded].every((file) => !compiled.has(file))).toBe(true);
    expect(embedded.size).toBeGreaterThan(3);
  });

  it('refuses a selection it does not know', () => {
    expect(() => excludedBy('everything')).toThrow(/TEST_SELECTION must be all, embedded, store, runtime or compiled/);
  });
});

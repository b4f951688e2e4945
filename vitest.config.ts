import { configDefaults, defineConfig } from 'vitest/config';
import { excludedBy } from './test/selection.js';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'sdk/test/**/*.test.ts'],
    // TEST_SELECTION: which files a CI leg runs (test/selection.ts); every file by default.
    exclude: [...configDefaults.exclude, ...excludedBy(process.env.TEST_SELECTION)],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // expect.poll waits for what a page or a background worker shows next; 1 s (the default) was
    // too short on a loaded two-core CI machine.
    expect: { poll: { timeout: 10_000 } },
    reporters: ['default'],
  },
});

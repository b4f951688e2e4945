import { configDefaults, defineConfig } from 'vitest/config';
import { excludedBy } from './test/selection.js';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'sdk/test/**/*.test.ts'],
    // TEST_SELECTION: which files a CI leg runs (test/selection.ts); every file by default.
    exclude: [...configDefaults.exclude, ...excludedBy(process.env.TEST_SELECTION)],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // Each worker imports the service's modules once for all the files it runs, not once per file:
    // on a loaded two-core CI machine a file's imports took ~4 s (593 s of a 144-file leg; 41 s
    // unisolated). The files share no module state they rely on: each builds its own service and
    // store. TEST_ISOLATE=1 isolates them again, to rule that out when a failure looks like leakage.
    isolate: process.env.TEST_ISOLATE === '1',
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // expect.poll waits for what a page or a background worker shows next; 1 s (the default) was
    // too short on a loaded two-core CI machine.
    expect: { poll: { timeout: 10_000 } },
    reporters: ['default'],
  },
});

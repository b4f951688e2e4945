import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'sdk/test/**/*.test.ts'],
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

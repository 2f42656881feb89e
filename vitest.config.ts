import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Tests spawn real watchers, servers and child processes; CI has two cores.
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default', './test/helpers/summaryReporter.ts'],
  },
});

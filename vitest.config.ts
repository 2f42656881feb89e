import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Tests spawn real watchers, servers and child processes; two cores in CI.
    pool: 'forks',
    maxWorkers: 2,
  },
});

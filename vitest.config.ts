import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Tests spawn real watchers, servers and child processes; CI has two cores.
    pool: 'forks',
    maxWorkers: 2,
    // CI=true switches the CLI to JSON lines; the tests' children must behave the same on a
    // laptop and in CI, so the suite clears it and the tests that want CI set it themselves.
    env: { CI: '' },
    // One temp root per run, removed at its end: the suite made ~1,000 folders in /tmp per run.
    globalSetup: ['./test/helpers/tempRoot.ts'],
    reporters: ['default', './test/helpers/summaryReporter.ts'],
  },
});

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'test/contract/**/*.test.ts', 'test/chain/**/*.test.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          // One Temporal dev server, one anvil, one worker and API for the whole run.
          globalSetup: ['test/integration/globalSetup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'browser',
          include: ['test/browser/**/*.test.ts'],
          // The checkout pages in Chromium (playwright-core) against the stack as `npm start` runs
          // it; skipped, with a line saying how to install it, where no Chromium is found.
          globalSetup: ['test/browser/globalSetup.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
      {
        test: {
          name: 'faults',
          include: ['test/faults/**/*.test.ts'],
          // Each case runs its own Temporal server, anvil, worker and API processes: one case at a time
          // on a 2-core machine. FAULTS_FULL=1 (npm run test:faults) runs the long forms.
          globalSetup: ['test/faults/summary.ts'],
          fileParallelism: false,
          testTimeout: 600_000,
          hookTimeout: 300_000,
        },
      },
      {
        test: {
          name: 'postgres',
          include: ['test/postgres/**/*.test.ts'],
          // The production shape (npm run test:postgres): the Temporal server on PostgreSQL, two
          // workers, two APIs; each file its own cluster, one at a time.
          globalSetup: ['test/faults/summary.ts'],
          fileParallelism: false,
          testTimeout: 600_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});

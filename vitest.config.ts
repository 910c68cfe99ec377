import { defineConfig } from 'vitest/config';

// Two projects: `unit` (no I/O, runs fully parallel) and `integration` (real PostgreSQL, Redis and
// RabbitMQ on 127.0.0.1; each test file isolates itself by schema, key prefix and queue names).
export default defineConfig({
  test: {
    globals: false,
    projects: [
      {
        test: {
          name: 'unit',
          sequence: { groupOrder: 0 },
          include: ['packages/*/test/unit/**/*.test.ts', 'services/*/test/unit/**/*.test.ts'],
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: [
            'packages/*/test/integration/**/*.test.ts',
            'services/*/test/integration/**/*.test.ts',
            'test/**/*.test.ts',
          ],
          exclude: ['test/chaos/**', '**/node_modules/**'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          maxWorkers: 2,
          // Runs after the unit project: a different worker count needs its own group.
          sequence: { groupOrder: 1 },
        },
      },
      {
        // Restarts the shared PostgreSQL, Redis and RabbitMQ: runs alone, after everything else.
        test: {
          name: 'chaos',
          include: ['test/chaos/**/*.test.ts'],
          testTimeout: 240_000,
          hookTimeout: 120_000,
          maxWorkers: 1,
          fileParallelism: false,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});

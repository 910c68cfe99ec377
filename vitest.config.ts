import { defineConfig } from 'vitest/config';

/** Tests that print how long `/health` took while Trawl did heavy work: run alone (below). */
const HOSTILE_TIMED = [
  'services/api-gateway/test/integration/hostile-mime.test.ts',
  'services/api-gateway/test/integration/hostile-auth.test.ts',
  'services/api-gateway/test/integration/hostile-webhook.test.ts',
  'test/hostile/unauthenticated-bodies.test.ts',
];

// Projects, in this order: `unit` (no I/O, runs fully parallel), `integration` (real PostgreSQL,
// Redis and RabbitMQ on 127.0.0.1; each test file isolates itself by schema, key prefix and queue
// names; docs/testing.md says what runs beside what), `hostile` (timed hostile-input tests, one
// file at a time) and `chaos` (restarts servers).
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
          // Unit files share their workers' module cache (docs/testing.md, ADR 025): importing a
          // file's modules anew in a fresh worker cost more than the tests themselves (one
          // worker, isolated: 415 s for 190 s of tests; shared: 119 s). They mock no module,
          // fake no timer and set no environment variable; a file that must would go to a
          // project of its own.
          isolate: false,
          // vitest's default is cores - 1, one worker on CI's two cores.
          maxWorkers: 2,
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
          exclude: ['test/chaos/**', 'test/hosts/**', '**/node_modules/**', ...HOSTILE_TIMED],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // Three workers on two cores: an integration file waits on servers and child processes
          // more than it computes (two workers kept the cores under half busy). Its files share
          // their workers' module cache as the unit files do: each isolates itself on the
          // servers (schema, key prefix, broker names, Redis database), not by a fresh process.
          maxWorkers: 3,
          isolate: false,
          // Runs after the unit project: a different worker count needs its own group.
          sequence: { groupOrder: 1 },
        },
      },
      {
        // The hostile-input tests that time `/health` while Trawl does heavy work (issue 15): one
        // file at a time, with no other test file running, so that the figure they print measures
        // what Trawl's own work does to its HTTP thread, not what other test processes competing
        // for the machine's cores do.
        test: {
          name: 'hostile',
          include: HOSTILE_TIMED,
          testTimeout: 60_000,
          hookTimeout: 60_000,
          maxWorkers: 1,
          fileParallelism: false,
          sequence: { groupOrder: 2 },
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
          sequence: { groupOrder: 3 },
        },
      },
    ],
  },
});

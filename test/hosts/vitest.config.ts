import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * The failure test across hosts (`pnpm test:hosts`, scripts/test-hosts.sh): alone, never in the
 * default projects' runs (it makes network namespaces and runs as root), one file, bounded.
 */
export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    globals: false,
    name: 'hosts',
    include: ['test/hosts/**/*.test.ts'],
    testTimeout: 480_000,
    hookTimeout: 420_000,
    maxWorkers: 1,
    fileParallelism: false,
  },
});

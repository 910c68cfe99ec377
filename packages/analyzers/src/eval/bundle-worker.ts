import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorker } from '../worker-bundle.ts';

/**
 * Bundles the eval worker (eval-worker.ts with every import) into one plain ES module (see
 * bundleWorker); `@trawl/plugin-sdk` is narrowed to its define.ts, all the analyzers need at run
 * time. Answers undefined when the build fails: the caller then uses the tsx-loaded worker.
 */
export async function bundleEvalWorker(): Promise<URL | undefined> {
  const entry = fileURLToPath(new URL('./eval-worker.ts', import.meta.url));
  return bundleWorker({
    name: 'eval-worker',
    key: entry,
    entry: { contents: `import ${JSON.stringify(entry)};`, resolveDir: dirname(entry) },
    sdk: [{ file: 'define.ts' }],
    bundler: fileURLToPath(import.meta.url),
  });
}

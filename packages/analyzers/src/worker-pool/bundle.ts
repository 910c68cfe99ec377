import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorker } from '../worker-bundle.ts';

/**
 * Bundles the analysis worker (analysis-worker.ts serving the analyzers of `definitions`) into one
 * plain ES module (see bundleWorker, the same method as the eval's worker), so that each worker
 * thread starts without tsx's loader and also where the sources run as compiled JavaScript;
 * `@trawl/plugin-sdk` is narrowed to define.ts and settings-resolve.ts. Answers undefined when the
 * build fails: the caller then uses the tsx-loaded worker.
 */
export async function bundleAnalysisWorker(definitions: URL): Promise<URL | undefined> {
  const worker = fileURLToPath(new URL('./analysis-worker.ts', import.meta.url));
  const defs = fileURLToPath(definitions);
  return bundleWorker({
    name: 'analysis-worker',
    key: `${worker}\n${defs}`,
    entry: {
      contents: [
        `import { serveAnalysisWorker } from ${JSON.stringify(worker)};`,
        `import { analyzers } from ${JSON.stringify(defs)};`,
        'serveAnalysisWorker(analyzers);',
      ].join('\n'),
      resolveDir: dirname(worker),
    },
    sdk: [{ file: 'define.ts' }, { file: 'settings-resolve.ts', names: ['resolveSettings'] }],
    bundler: fileURLToPath(import.meta.url),
  });
}

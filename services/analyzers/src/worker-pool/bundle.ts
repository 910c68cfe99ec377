import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * Bundles the analysis worker (analysis-worker.ts serving the analyzers of `definitions`, with every
 * import, npm packages included) into one plain ES module, so that each worker thread starts without
 * tsx's per-file loader (seconds of CPU per thread otherwise) and also where the sources run as
 * compiled JavaScript. The same method as the eval's worker (eval/bundle-worker.ts):
 * `import.meta.url` keeps each source file's own location (the analyzers find their default
 * lexicons, rules and weights relative to it); `@trawl/plugin-sdk` is narrowed to the two files a
 * worker needs (define.ts, settings-resolve.ts), which keeps fastify & co. out. The bundle is cached
 * in the temp directory and rebuilt when any of its input files changes. Answers undefined when
 * esbuild is unavailable or the build fails: the caller then uses the tsx-loaded worker.
 */
export async function bundleAnalysisWorker(definitions: URL): Promise<URL | undefined> {
  const worker = fileURLToPath(new URL('./analysis-worker.ts', import.meta.url));
  const defs = fileURLToPath(definitions);
  const sdk = fileURLToPath(new URL('../../../../packages/plugin-sdk/src/', import.meta.url));
  const dir = join(
    tmpdir(),
    `trawl-analysis-${createHash('sha256').update(`${worker}\n${defs}`).digest('hex').slice(0, 12)}`,
  );
  const outfile = join(dir, 'analysis-worker.mjs');
  const manifest = join(dir, 'inputs.json');
  if (upToDate(outfile, manifest)) return pathToFileURL(outfile);

  let esbuild: typeof import('esbuild');
  try {
    esbuild = await import('esbuild');
  } catch {
    return undefined;
  }
  try {
    const r = await esbuild.build({
      stdin: {
        contents: [
          `import { serveAnalysisWorker } from ${JSON.stringify(worker)};`,
          `import { analyzers } from ${JSON.stringify(defs)};`,
          'serveAnalysisWorker(analyzers);',
        ].join('\n'),
        resolveDir: dirname(worker),
        sourcefile: 'analysis-worker-entry.ts',
        loader: 'ts',
      },
      bundle: true,
      write: false,
      metafile: true,
      outfile,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      logLevel: 'silent',
      // CommonJS packages in an ES module bundle need a real require
      banner: {
        js: "import { createRequire as __trawlCreateRequire } from 'node:module'; const require = __trawlCreateRequire(import.meta.url);",
      },
      plugins: [
        {
          name: 'trawl-analysis-worker',
          setup(b) {
            b.onResolve({ filter: /^@trawl\/plugin-sdk$/ }, () => ({
              path: 'plugin-sdk-worker',
              namespace: 'trawl-sdk',
            }));
            b.onLoad({ filter: /.*/, namespace: 'trawl-sdk' }, () => ({
              contents: [
                `export * from ${JSON.stringify(join(sdk, 'define.ts'))};`,
                `export { resolveSettings } from ${JSON.stringify(join(sdk, 'settings-resolve.ts'))};`,
              ].join('\n'),
              resolveDir: sdk,
              loader: 'ts',
            }));
            b.onLoad({ filter: /\.ts$/ }, (args) => {
              if (args.path.includes('/node_modules/')) return undefined;
              const src = readFileSync(args.path, 'utf8');
              if (!src.includes('import.meta.url')) return undefined;
              return {
                contents: src.replaceAll(
                  'import.meta.url',
                  JSON.stringify(pathToFileURL(args.path).href),
                ),
                loader: 'ts',
              };
            });
          },
        },
      ],
    });
    const code = r.outputFiles?.[0]?.contents;
    if (!code) return undefined;
    mkdirSync(dir, { recursive: true });
    const inputs = Object.keys(r.metafile.inputs)
      .filter((p) => !p.startsWith('trawl-sdk:') && p !== 'analysis-worker-entry.ts')
      .map((p) => resolve(p));
    inputs.push(fileURLToPath(import.meta.url)); // this bundler's own settings
    const tmp = `${outfile}.${process.pid}`;
    writeFileSync(tmp, code);
    renameSync(tmp, outfile);
    writeFileSync(`${manifest}.${process.pid}`, JSON.stringify(stamps(inputs)));
    renameSync(`${manifest}.${process.pid}`, manifest);
    return pathToFileURL(outfile);
  } catch {
    return undefined;
  }
}

function stamps(paths: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of paths) {
    try {
      const s = statSync(p);
      out[p] = `${s.size}:${s.mtimeMs}`;
    } catch {
      out[p] = 'missing';
    }
  }
  return out;
}

function upToDate(outfile: string, manifest: string): boolean {
  try {
    statSync(outfile);
    const want = JSON.parse(readFileSync(manifest, 'utf8')) as Record<string, string>;
    const paths = Object.keys(want);
    if (paths.length === 0) return false;
    const now = stamps(paths);
    return paths.every((p) => now[p] === want[p]);
  } catch {
    return false;
  }
}

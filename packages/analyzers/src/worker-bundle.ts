import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const SDK_DIR = fileURLToPath(new URL('../../../packages/plugin-sdk/src/', import.meta.url));

export interface WorkerBundle {
  /** Name of the cached bundle (`<name>.mjs` in `trawl-<name>-<hash of key>/` under tmpdir). */
  name: string;
  /** What the cache folder is keyed on (the entry files). */
  key: string;
  /** The module to bundle: its source text (imports as absolute paths) and the folder they resolve from. */
  entry: { contents: string; resolveDir: string };
  /** Files of packages/plugin-sdk/src re-exported whole as `@trawl/plugin-sdk`; everything else stays out. */
  sdk: { file: string; names?: string[] }[];
  /** The calling bundler's file: a change to its settings rebuilds the bundle. */
  bundler: string;
}

const ENTRY = 'trawl-worker-entry.ts';

/**
 * Bundles a worker thread's module (with every import, npm packages included) into one plain ES
 * module, so that each worker starts without tsx's per-file loader (seconds of CPU per thread
 * otherwise). `import.meta.url` keeps each source file's own location (the analyzers find their
 * default lexicons, rules and weights relative to it); `@trawl/plugin-sdk` is narrowed to the files
 * named in `sdk`, which keeps fastify & co. out. The bundle is cached in the temp directory and
 * rebuilt when any of its input files changes. Answers undefined when esbuild is unavailable or the
 * build fails: the caller then loads the worker with tsx.
 */
export async function bundleWorker(b: WorkerBundle): Promise<URL | undefined> {
  const dir = join(
    tmpdir(),
    `trawl-${b.name}-${createHash('sha256').update(b.key).digest('hex').slice(0, 12)}`,
  );
  const outfile = join(dir, `${b.name}.mjs`);
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
      stdin: { ...b.entry, sourcefile: ENTRY, loader: 'ts' },
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
          name: `trawl-${b.name}`,
          setup(p) {
            p.onResolve({ filter: /^@trawl\/plugin-sdk$/ }, () => ({
              path: 'plugin-sdk-worker',
              namespace: 'trawl-sdk',
            }));
            p.onLoad({ filter: /.*/, namespace: 'trawl-sdk' }, () => ({
              contents: b.sdk
                .map(({ file, names }) => {
                  const from = JSON.stringify(join(SDK_DIR, file));
                  return names
                    ? `export { ${names.join(', ')} } from ${from};`
                    : `export * from ${from};`;
                })
                .join('\n'),
              resolveDir: SDK_DIR,
              loader: 'ts',
            }));
            p.onLoad({ filter: /\.ts$/ }, (args) => {
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
      .filter((p) => !p.startsWith('trawl-sdk:') && p !== ENTRY)
      .map((p) => resolve(p));
    // the bundlers' own settings
    inputs.push(b.bundler, fileURLToPath(import.meta.url));
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

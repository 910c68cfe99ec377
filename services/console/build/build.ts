/**
 * Builds the console into dist/ (`pnpm build:console`): Vite bundles src/ for the browser, then
 * dist/build-info.json records the hash of the sources and the size of every script, plain and
 * gzipped (the budget: under 250 KB of script, gzip, for the first page).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'vite';
import { CONSOLE_ROOT, sourceHash } from './source-hash.ts';

const BUDGET_GZIP_BYTES = 250 * 1024;

await build({
  root: CONSOLE_ROOT,
  base: '/',
  configFile: false,
  logLevel: 'warn',
  publicDir: join(CONSOLE_ROOT, 'public'),
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  plugins: [
    {
      // dist/index.html on one line: the white space between tags means nothing to a browser, and
      // the committed copy then does not repeat index.html line for line (the duplicates check).
      name: 'trawl-collapse-index-html',
      transformIndexHtml: {
        order: 'post',
        handler: (html) => `${html.replace(/>\s+</g, '><').trim()}\n`,
      },
    },
  ],
  build: {
    outDir: join(CONSOLE_ROOT, 'dist'),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
});

const dist = join(CONSOLE_ROOT, 'dist');
const assets = readdirSync(join(dist, 'assets')).sort();
const files = assets.map((name) => {
  const bytes = readFileSync(join(dist, 'assets', name));
  return {
    path: `assets/${name}`,
    bytes: bytes.length,
    gzip_bytes: gzipSync(bytes, { level: 9 }).length,
  };
});
const index = readFileSync(join(dist, 'index.html'), 'utf8');
// The first page loads the scripts index.html names (the entry and what it imports statically).
const firstPage = files.filter((f) => f.path.endsWith('.js') && index.includes(`/${f.path}`));
const scriptGzip = firstPage.reduce((n, f) => n + f.gzip_bytes, 0);
const info = {
  source_hash: sourceHash(),
  files,
  first_page_script_gzip_bytes: scriptGzip,
  budget_gzip_bytes: BUDGET_GZIP_BYTES,
};
writeFileSync(join(dist, 'build-info.json'), `${JSON.stringify(info, null, 2)}\n`);
process.stdout.write(
  `console built: ${files.length} assets, first page script ${(scriptGzip / 1024).toFixed(1)} KiB gzip\n`,
);
if (scriptGzip > BUDGET_GZIP_BYTES) {
  process.stderr.write('console script budget exceeded\n');
  process.exit(1);
}

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONSOLE_ROOT, sourceHash } from '../../build/source-hash.ts';

const dist = join(CONSOLE_ROOT, 'dist');
const info = JSON.parse(readFileSync(join(dist, 'build-info.json'), 'utf8')) as {
  source_hash: string;
  files: { path: string; bytes: number; gzip_bytes: number }[];
  first_page_script_gzip_bytes: number;
  budget_gzip_bytes: number;
};

describe('the console shipped in dist/', () => {
  // The gateway serves dist/ as committed (no build step at start): a source changed without
  // `pnpm build:console` would ship the old console.
  it('was built from the sources as they are (run pnpm build:console when this fails)', () => {
    expect(info.source_hash).toBe(sourceHash());
  });

  it('holds every asset its index.html loads, and no inline script', () => {
    const index = readFileSync(join(dist, 'index.html'), 'utf8');
    const refs = [...index.matchAll(/(?:src|href)="\/(assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(refs.some((r) => r.endsWith('.js'))).toBe(true);
    for (const r of refs) expect(existsSync(join(dist, r)), r).toBe(true);
    // every <script> has a src: the console's CSP allows no inline script
    for (const m of index.matchAll(/<script\b([^>]*)>/g)) expect(m[1]).toContain('src=');
  });

  it('keeps the first page under 250 KB of script, gzip', () => {
    expect(info.first_page_script_gzip_bytes).toBeGreaterThan(0);
    expect(info.first_page_script_gzip_bytes).toBeLessThan(250 * 1024);
  });
});

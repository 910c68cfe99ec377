import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// A plugin author's view of the SDK: `pnpm pack` gives tarballs that npm installs in a folder
// outside this repository, where a plugin written against them type-checks and passes the
// conformance kit run by the author's own vitest. Packing builds both packages with tsc (prepack).

const repo = new URL('../../../../', import.meta.url).pathname;
const packages = ['contracts', 'plugin-sdk'] as const;
const rootManifest = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as {
  devDependencies: Record<string, string>;
};
const sdkManifest = JSON.parse(
  readFileSync(join(repo, 'packages/plugin-sdk/package.json'), 'utf8'),
) as { dependencies: Record<string, string> };

const PLUGIN = `import { defineAnalyzer, type AnalyzerDefinition } from '@trawl/plugin-sdk';
import { z } from 'zod';

export const wireTransfer: AnalyzerDefinition = defineAnalyzer({
  id: 'wire-transfer',
  version: '1.0.0',
  description: 'Urgent requests to wire money',
  settings: z.object({ confidence: z.number().min(0).max(1).default(0.7) }),
  analyze(email, { settings }) {
    const text = (email.headers.subject + ' ' + (email.body_text ?? '')).toLowerCase();
    const hit = text.includes('wire') || text.includes('transfer');
    return {
      is_phishing: hit,
      confidence: hit ? settings.confidence : 0.6,
      indicators: hit ? [{ type: 'payment_request', value: 'asks for a wire transfer', confidence: 0.7 }] : [],
    };
  },
});
`;

const CONFORMANCE = `import { createPluginApp } from '@trawl/plugin-sdk';
import { pluginConformance } from '@trawl/plugin-sdk/testing';
import { wireTransfer } from './plugin.ts';

pluginConformance({
  name: 'wire-transfer',
  app: () => createPluginApp({ plugins: [wireTransfer], internalApiKey: 'outside-key' }),
  kind: 'analyzer',
  id: 'wire-transfer',
  internalApiKey: 'outside-key',
});
`;

interface PackedManifest {
  name: string;
  exports: Record<string, { types: string; import: string }>;
  dependencies?: Record<string, string>;
}

describe('the packed plugin SDK, installed outside the repository', () => {
  let dir = '';
  const tarballs: string[] = [];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'trawl-packed-sdk-'));
    for (const name of packages) {
      const out = execFileSync('pnpm', ['pack', '--pack-destination', dir], {
        cwd: join(repo, 'packages', name),
        encoding: 'utf8',
      });
      const tarball = out.trim().split('\n').pop() ?? '';
      expect(tarball.endsWith('.tgz'), out).toBe(true);
      tarballs.push(tarball);
    }
    const app = join(dir, 'author-plugin');
    mkdirSync(app);
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({ name: 'author-plugin', private: true, type: 'module' }),
    );
    execFileSync(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--prefer-offline',
        '--loglevel=error',
        ...tarballs,
        `vitest@${rootManifest.devDependencies.vitest}`,
        `zod@${sdkManifest.dependencies.zod}`,
      ],
      { cwd: app, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );
    writeFileSync(join(app, 'plugin.ts'), PLUGIN);
    writeFileSync(join(app, 'conformance.test.ts'), CONFORMANCE);
  }, 300_000);

  afterAll(() => {
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  it('carries only built files and no workspace-only dependency', () => {
    for (const [i, name] of packages.entries()) {
      const listing = execFileSync('tar', ['tzf', tarballs[i] ?? ''], { encoding: 'utf8' });
      const files = listing.trim().split('\n');
      expect(files, name).toContain('package/dist/index.js');
      expect(files, name).toContain('package/dist/index.d.ts');
      expect(files, name).toContain('package/LICENSE');
      expect(
        files.filter((f) => f.startsWith('package/src/') || f.startsWith('package/test/')),
      ).toEqual([]);
      const manifest = JSON.parse(
        execFileSync('tar', ['xzOf', tarballs[i] ?? '', 'package/package.json'], {
          encoding: 'utf8',
        }),
      ) as PackedManifest;
      for (const target of Object.values(manifest.exports)) {
        expect(target.import).toMatch(/^\.\/dist\/.+\.js$/);
        expect(target.types).toMatch(/^\.\/dist\/.+\.d\.ts$/);
      }
      for (const [dep, range] of Object.entries(manifest.dependencies ?? {})) {
        expect(range, `${name} depends on ${dep}@${range}`).not.toMatch(/^workspace:/);
        // Every @trawl package it needs is one of the packed ones (none is private).
        if (dep.startsWith('@trawl/')) expect(packages.map((p) => `@trawl/${p}`)).toContain(dep);
      }
    }
  });

  it('type-checks a plugin written against the installed declarations', () => {
    const app = join(dir, 'author-plugin');
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          allowImportingTsExtensions: true,
          types: [],
          skipLibCheck: true,
        },
        files: ['plugin.ts'],
      }),
    );
    const tsc = join(repo, 'node_modules/typescript/bin/tsc');
    let output = '';
    try {
      execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: app, encoding: 'utf8' });
    } catch (err) {
      output = String((err as { stdout?: string }).stdout ?? err);
    }
    expect(output).toBe('');
  });

  it('passes the conformance kit, run by the author’s own vitest', () => {
    const app = join(dir, 'author-plugin');
    const report = join(dir, 'report.json');
    try {
      execFileSync(
        process.execPath,
        [
          join(app, 'node_modules/vitest/vitest.mjs'),
          'run',
          '--reporter=json',
          `--outputFile=${report}`,
        ],
        { cwd: app, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
      );
    } catch {
      // the report below says which test failed
    }
    const r = JSON.parse(readFileSync(report, 'utf8')) as {
      numPassedTests: number;
      numFailedTests: number;
      testResults: { assertionResults: { fullName: string; status: string }[] }[];
    };
    const failed = r.testResults
      .flatMap((f) => f.assertionResults)
      .filter((a) => a.status !== 'passed')
      .map((a) => a.fullName);
    expect(failed).toEqual([]);
    expect(r.numFailedTests).toBe(0);
    // the kit declares more than the health, capabilities and analyze checks
    expect(r.numPassedTests).toBeGreaterThanOrEqual(6);
  });
});

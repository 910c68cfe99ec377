import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { findRepoRoot } from '@trawl/config';
import { describe, expect, it } from 'vitest';
import { sharedCorpora } from '../../../../test/support/require-component.ts';
import { loadEvalConfig } from '../../src/eval/load-config.ts';
import { defaultWorkers, runEval } from '../../src/eval/run-eval.ts';
import { builtinAnalyzers } from '../../src/registry.ts';

// The detection figures docs/analyzers.md publishes ("Measured across sources", the shipped
// defaults' column) hold: the eval of the shared corpora, run in-process with the shipped
// configuration, gives each source a recall at or above, and an FPR at or below, the published one.
// A change that lowers detection fails here until the documentation says so.

const root = findRepoRoot();
const dirs = sharedCorpora();

interface Published {
  source: string;
  metric: 'recall' | 'fpr';
  /** As printed: recall to 3 decimals, FPR in percent to 1 decimal. */
  value: number;
  decimals: number;
}

/** The last column of the table under "## Measured across sources". */
function publishedFigures(): Published[] {
  const doc = readFileSync(join(root, 'docs/analyzers.md'), 'utf8');
  const section = doc.split('\n## Measured across sources')[1]?.split('\n## ')[0] ?? '';
  const rows: Published[] = [];
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const source = cells[1] ?? '';
    const last = cells.at(-2) ?? '';
    const recall = /^recall (\d\.\d+)$/.exec(last);
    const fpr = /^FPR (\d+(?:\.\d+)?)%$/.exec(last);
    if (recall?.[1]) {
      rows.push({ source, metric: 'recall', value: Number(recall[1]), decimals: 3 });
    } else if (fpr?.[1]) {
      const decimals = fpr[1].split('.')[1]?.length ?? 0;
      rows.push({ source, metric: 'fpr', value: Number(fpr[1]), decimals });
    }
  }
  return rows;
}

const round = (x: number, decimals: number) => Number(x.toFixed(decimals));

describe.skipIf(dirs === null)('the published detection figures of the shared corpora', () => {
  it('holds every source at or above what docs/analyzers.md publishes', async () => {
    const published = publishedFigures();
    // the table names the five sources of the shared corpora
    expect(published.map((p) => p.source).sort()).toEqual([
      'corpus/ham',
      'corpus/phishing',
      'fixtures-ham/ham',
      'lists-modern/ham',
      'nazario-2022/phishing',
    ]);
    const defaults = join(root, 'config', 'defaults');
    const cfg = loadEvalConfig(root, {
      service: join(defaults, 'service.yaml'),
      workflows: join(defaults, 'workflows.yaml'),
    });
    const report = await runEval({
      dir: dirs![0]!,
      dirs: dirs!,
      sourceByClass: true,
      workflowId: cfg.service.workflow.default_workflow_id,
      workflows: cfg.workflows,
      service: cfg.service,
      registry: builtinAnalyzers,
      concurrency: 4,
      workers: defaultWorkers(),
    });
    const measured = new Map(report.sources.map((s) => [s.source, s.metrics]));
    const lines: string[] = [];
    for (const p of published) {
      const m = measured.get(p.source);
      expect(m, `source ${p.source} measured`).toBeDefined();
      if (p.metric === 'recall') {
        const got = round(m!.recall, p.decimals);
        lines.push(`${p.source}: recall ${got} (published ${p.value})`);
        expect(got, `${p.source} recall`).toBeGreaterThanOrEqual(p.value);
      } else {
        const got = round(m!.fpr * 100, p.decimals);
        lines.push(`${p.source}: FPR ${got}% (published ${p.value}%)`);
        expect(got, `${p.source} FPR`).toBeLessThanOrEqual(p.value);
      }
    }
    process.stdout.write(`[published figures] ${lines.join('; ')}\n`);
  }, 180_000);
});

import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { findRepoRoot } from '@trawl/config';
import { fitWeights, weightsYaml } from '../eval/fit-weights.ts';
import { loadEvalConfig } from '../eval/load-config.ts';
import { defaultWorkers, formatReport, runEval } from '../eval/run-eval.ts';
import { builtinAnalyzers } from '../registry.ts';

const USAGE = `usage: pnpm eval <dir> [--workflow id] [--json out.json] [--config service.yaml] [--workflows workflows.yaml] [--concurrency n] [--workers n] [--limit n-per-class] [--fit-weights out.yaml]
  <dir> holds phishing/*.eml and ham/*.eml
  --workers n          worker threads (default: available cores)
  --fit-weights f      fit the scorer's symbol weights on the even-numbered files and write them to f`;

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      workflow: { type: 'string' },
      json: { type: 'string' },
      config: { type: 'string' },
      workflows: { type: 'string' },
      concurrency: { type: 'string' },
      limit: { type: 'string' },
      workers: { type: 'string' },
      'fit-weights': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help || positionals.length !== 1) {
    process.stderr.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const root = findRepoRoot();
  const cfg = loadEvalConfig(root, {
    ...(values.config ? { service: resolve(values.config) } : {}),
    ...(values.workflows ? { workflows: resolve(values.workflows) } : {}),
  });
  const workflowId = values.workflow ?? cfg.service.workflow.default_workflow_id;
  const tty = process.stderr.isTTY;
  const report = await runEval({
    dir: resolve(positionals[0]!),
    workflowId,
    workflows: cfg.workflows,
    service: cfg.service,
    registry: builtinAnalyzers,
    concurrency: Number(values.concurrency ?? 4),
    workers: values.workers ? Math.max(1, Number(values.workers)) : defaultWorkers(),
    ...(values.limit ? { limit: Number(values.limit) } : {}),
    onProgress: (done, total) => {
      if (done % 100 === 0 || done === total) {
        process.stderr.write(
          `${tty ? '\r' : ''}eval: ${done}/${total}${tty && done < total ? '' : '\n'}`,
        );
      }
    },
  });
  if (values.json) writeFileSync(resolve(values.json), `${JSON.stringify(report, null, 2)}\n`);
  if (values['fit-weights']) {
    const fit = fitWeights(report.outcomes);
    const t = fit.train;
    writeFileSync(
      resolve(values['fit-weights']),
      weightsYaml(
        fit,
        `Scorer weights (log-odds), fitted by \`pnpm eval --fit-weights\` on the even-numbered files of
${positionals[0]} (${t.messages} messages; training TP ${t.tp} FP ${t.fp} FN ${t.fn} TN ${t.tn}).
Every weight >= 0; hand edits are fine. Comments: training messages where the symbol was reported.`,
      ),
    );
    process.stderr.write(`eval: weights written to ${values['fit-weights']}\n`);
  }
  process.stdout.write(`${formatReport(report)}\n`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`eval failed: ${(err as Error).message}\n`);
    process.exit(1);
  },
);

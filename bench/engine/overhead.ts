/**
 * Engine overhead (`pnpm exec tsx bench/engine/overhead.ts`): the shipped `default` workflow
 * (config/defaults/workflows.yaml) run by the workflow engine alone, with trivial in-process analyzers
 * that answer a fixed valid answer at once (the llm stage runs and its analyzer fails, as in
 * `pnpm eval` without an LLM). Prints µs per workflow run: cold (the first BENCH_COLD runs of a fresh
 * process) and warm (BENCH_RUNS runs after them), wall and CPU time, one run at a time and with
 * BENCH_CONCURRENCY runs in flight. Beside them, the same analyzer calls made directly in the same stage
 * shape (the baseline), so the engine's own cost is the difference.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadServiceFiles } from '@trawl/config';
import type { AnalyzerAnswerInput } from '@trawl/contracts';
import type { EngineDeps } from '@trawl/workflow-engine';
import * as currentEngine from '@trawl/workflow-engine';
import { BENCH_EMAIL } from './bench-email.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const COLD = Number(process.env.BENCH_COLD ?? 1000);
const RUNS = Number(process.env.BENCH_RUNS ?? 20_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const WORKFLOW = process.env.BENCH_WORKFLOW ?? 'default';
/** Another engine to measure (e.g. an older checkout's src/index.ts), for before/after figures. */
const ENGINE = process.env.BENCH_ENGINE;
const { compileWorkflow, runWorkflow } = (
  ENGINE ? await import(ENGINE) : currentEngine
) as typeof currentEngine;

const files = loadServiceFiles({
  configFile: join(root, 'config/defaults/service.yaml'),
  workflowsFile: join(root, 'config/defaults/workflows.yaml'),
});
const wf = files.workflows.find((w) => w.id === WORKFLOW);
if (!wf) throw new Error(`no workflow ${WORKFLOW} in config/defaults/workflows.yaml`);
const compiled = compileWorkflow(wf);

const email = BENCH_EMAIL;

/** What the offline analyzers answer: a few indicators and symbols, like the built-ins. */
function fixedAnswer(id: string, isPhishing: boolean, confidence: number): AnalyzerAnswerInput {
  return {
    is_phishing: isPhishing,
    confidence,
    summary: `${id}: fixed answer`,
    indicators: [
      { type: 'suspicious_url', value: 'http://examp1e-bank.com/login', confidence: 0.7 },
      { type: 'rule_match', value: `${id}_rule`, confidence: 0.4 },
    ],
    analyzer_details: { symbols: [`${id.toUpperCase()}_A`, `${id.toUpperCase()}_B`] },
  };
}
const answers: Record<string, AnalyzerAnswerInput> = {
  headers: fixedAnswer('headers', true, 0.6),
  urls: fixedAnswer('urls', true, 0.7),
  content: fixedAnswer('content', false, 0.6),
  attachments: { is_phishing: false, confidence: 0.9, indicators: [] },
  rules: fixedAnswer('rules', true, 0.55),
  // a probability of 0.5 opens the conditional llm stage, whose analyzer is not available
  scorer: fixedAnswer('scorer', false, 0.5),
};

/**
 * Made once: a fresh Error captures the caller's stack, which is deeper under the engine than in the
 * baseline, so that capture would be counted as the engine's cost.
 */
const unavailable = new Error('analyzer llm is not available in-process');
let calls = 0;
const deps: EngineDeps = {
  async callAnalyzer(id) {
    calls++;
    const a = answers[id];
    if (!a) throw unavailable;
    // a fresh object per call, as a real analyzer builds one
    return { ...a, indicators: a.indicators.map((i) => ({ ...i })) } as never;
  },
  async callProvider(id) {
    return { provider_id: id, data: {} };
  },
};

async function one(): Promise<void> {
  const out = await runWorkflow(compiled, email, deps);
  if (out.status !== 'completed') throw new Error(`run failed: ${JSON.stringify(out.error)}`);
}

const signal = new AbortController().signal;
const callOpts = (stage: string) => ({ signal, timeoutMs: 5000, stage, attempt: 1 });
/** The baseline: the same calls in the same stage shape, nothing else. */
async function direct(): Promise<void> {
  const offline = compiled.stages[0]!.analyzers.map((a) => a.ref.id);
  await Promise.all(offline.map((id) => deps.callAnalyzer(id, email, callOpts('offline'))));
  await deps.callAnalyzer('scorer', email, callOpts('score'));
  await deps.callAnalyzer('llm', email, callOpts('llm')).catch(() => undefined);
}

interface Figure {
  wallUs: number;
  cpuUs: number;
}

async function measure(
  n: number,
  concurrency: number,
  fn: () => Promise<void> = one,
): Promise<Figure> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  if (concurrency <= 1) {
    for (let i = 0; i < n; i++) await fn();
  } else {
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < n) {
          next++;
          await fn();
        }
      }),
    );
  }
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { wallUs: (wall * 1000) / n, cpuUs: (c.user + c.system) / n };
}

const f = (x: Figure) => `${x.wallUs.toFixed(1)} µs wall, ${x.cpuUs.toFixed(1)} µs CPU`;
const cold = await measure(COLD, 1);
const perRun = calls / COLD;
const warm1 = await measure(RUNS, 1);
const warmC = await measure(RUNS, CONCURRENCY);
const base1 = await measure(RUNS, 1, direct);
const baseC = await measure(RUNS, CONCURRENCY, direct);
const added = (a: Figure, b: Figure) =>
  `${(a.wallUs - b.wallUs).toFixed(1)} µs wall, ${(a.cpuUs - b.cpuUs).toFixed(1)} µs CPU`;
console.log(
  [
    `engine overhead${ENGINE ? ` (${ENGINE})` : ''}: workflow ${WORKFLOW} (${compiled.stages.length} stages, ${perRun} analyzer calls/run), trivial in-process analyzers, node ${process.version}`,
    `  cold (first ${COLD} runs)        ${f(cold)} per run`,
    `  warm (${RUNS} runs, 1 in flight)  ${f(warm1)} per run`,
    `  warm (${RUNS} runs, ${CONCURRENCY} in flight) ${f(warmC)} per run`,
    `  baseline, direct calls (1 in flight)  ${f(base1)}; (${CONCURRENCY} in flight) ${f(baseC)}`,
    `  engine's own cost per run, warm: 1 in flight ${added(warm1, base1)}; ${CONCURRENCY} in flight ${added(warmC, baseC)}`,
  ].join('\n'),
);

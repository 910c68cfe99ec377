/**
 * Engine benchmark (`pnpm bench:engine`): the orchestrator's path (workflow engine + HTTP plugin
 * client + zod validation + aggregation) running a three-stage workflow of six analyzers that answer
 * at once on loopback, against the same six HTTP calls made directly with the same HTTP client and the
 * same stage shape, in the same run. Prints jobs/s and the latency added per job (p50, p99).
 *
 * Bounded: BENCH_JOBS jobs per measurement (default 3000), BENCH_CONCURRENCY for the throughput
 * phase (default 32), and a hard stop after BENCH_MAX_SECONDS (default 180).
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import {
  createConfigSource,
  createJobRunner,
  snapshotFromFiles,
} from '@trawl/analyzer-orchestrator';
import { Workflow } from '@trawl/contracts';
import { createPluginClient } from '@trawl/plugin-client';
import { BENCH_EMAIL } from './bench-email.ts';

const here = dirname(fileURLToPath(import.meta.url));
const JOBS = Number(process.env.BENCH_JOBS ?? 3000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const MAX_SECONDS = Number(process.env.BENCH_MAX_SECONDS ?? 180);
const STAGES = [
  ['a1', 'a2'],
  ['a3', 'a4'],
  ['a5', 'a6'],
];

/** The undici the plugin client uses (same version, same pool settings) for the direct baseline. */
interface UndiciPool {
  request(o: {
    path: string;
    method: string;
    headers: Record<string, string>;
    body: string;
  }): Promise<{ statusCode: number; body: { text(): Promise<string> } }>;
  close(): Promise<void>;
}
const requireFromClient = createRequire(join(here, '../../packages/plugin-client/package.json'));
const undici = (await import(requireFromClient.resolve('undici'))) as {
  Pool: new (origin: string, o: Record<string, unknown>) => UndiciPool;
};

const email = BENCH_EMAIL;

const hardStop = setTimeout(() => {
  console.error(`benchmark exceeded ${MAX_SECONDS}s: stopped`);
  process.exit(2);
}, MAX_SECONDS * 1000);
hardStop.unref();

// ---- the analyzers' server process
const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'analyzers-server.ts')], {
  stdio: ['pipe', 'pipe', 'inherit'],
});
const port = await new Promise<number>((resolve, reject) => {
  const rl = createInterface({ input: child.stdout! });
  rl.once('line', (l) => resolve((JSON.parse(l) as { port: number }).port));
  child.once('exit', (c) => reject(new Error(`analyzer server exited (${c})`)));
});
const origin = `http://127.0.0.1:${port}`;

// ---- the orchestrator's path
const workflow = Workflow.parse({
  id: 'bench',
  name: 'Bench',
  stages: STAGES.map((ids, i) => ({
    name: `s${i + 1}`,
    type: 'parallel',
    analyzers: ids.map((id) => ({ id })),
  })),
});
const snapshot = snapshotFromFiles({
  version: 'bench',
  workflows: [workflow],
  service: {
    version: '1',
    platform: { log_level: 'info', debug: false },
    analyzer: { timeout_ms: 30_000, min_confidence: 0 },
    workflow: { default_workflow_id: 'bench', max_retries: 3 },
    verdict: { thresholds: { low: 0.3, medium: 0.5, high: 0.7, critical: 0.9 } },
    analyzers: {},
    plugins: { analyzers: {}, context_providers: {} },
  },
});
const client = createPluginClient({
  analyzers: Object.fromEntries(STAGES.flat().map((id) => [id, { url: `${origin}/${id}` }])),
  connections: 32,
});
const runner = createJobRunner({ invoker: client, config: createConfigSource(snapshot) });
async function orchestrated(): Promise<void> {
  const out = await runner('bench', email);
  if (out?.status !== 'completed') throw new Error(`run failed: ${JSON.stringify(out)}`);
}

// ---- the baseline: the same calls, same stage shape, same client library, nothing else
const pool = new undici.Pool(origin, {
  connections: 32,
  pipelining: 1,
  keepAliveTimeout: 30_000,
  keepAliveMaxTimeout: 600_000,
});
const headers = { 'content-type': 'application/json' };
async function direct(): Promise<void> {
  for (const stage of STAGES) {
    await Promise.all(
      stage.map(async (id) => {
        const r = await pool.request({
          path: `/${id}/internal/analyze`,
          method: 'POST',
          headers,
          body: JSON.stringify(email),
        });
        const text = await r.body.text();
        if (r.statusCode !== 200) throw new Error(`status ${r.statusCode}`);
        JSON.parse(text);
      }),
    );
  }
}

function pct(sorted: number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] ?? Number.NaN;
}
const f = (x: number) => x.toFixed(3);

async function throughput(fn: () => Promise<void>, n: number, c: number): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (next < n) {
        next++;
        await fn();
      }
    }),
  );
  return n / ((performance.now() - t0) / 1000);
}

try {
  // warm-up: connections, JIT
  for (let i = 0; i < 300; i++) {
    await orchestrated();
    await direct();
  }

  // latency: one job at a time, the two paths interleaved so drift hits both alike
  const lo: number[] = [];
  const ld: number[] = [];
  const diff: number[] = [];
  for (let i = 0; i < JOBS; i++) {
    const t0 = performance.now();
    await orchestrated();
    const t1 = performance.now();
    await direct();
    const t2 = performance.now();
    lo.push(t1 - t0);
    ld.push(t2 - t1);
    diff.push(t1 - t0 - (t2 - t1));
  }
  lo.sort((a, b) => a - b);
  ld.sort((a, b) => a - b);
  diff.sort((a, b) => a - b);

  // throughput: CONCURRENCY jobs in flight
  const tpDirect = await throughput(direct, JOBS, CONCURRENCY);
  const tpOrch = await throughput(orchestrated, JOBS, CONCURRENCY);

  const lines = [
    `engine benchmark: ${JOBS} jobs per measurement, workflow 3 stages x 2 parallel analyzers (6 HTTP calls/job), node ${process.version}`,
    `latency per job, one at a time (ms):`,
    `  direct HTTP calls (baseline)  p50 ${f(pct(ld, 50))}  p99 ${f(pct(ld, 99))}`,
    `  orchestrator engine + client  p50 ${f(pct(lo, 50))}  p99 ${f(pct(lo, 99))}`,
    `  added latency per job         p50 ${f(pct(lo, 50) - pct(ld, 50))}  p99 ${f(pct(lo, 99) - pct(ld, 99))}   (paired differences: p50 ${f(pct(diff, 50))} p99 ${f(pct(diff, 99))})`,
    `throughput, ${CONCURRENCY} jobs in flight (jobs/s):`,
    `  direct HTTP calls (baseline)  ${tpDirect.toFixed(0)}`,
    `  orchestrator engine + client  ${tpOrch.toFixed(0)}  (${((tpOrch / tpDirect) * 100).toFixed(0)}% of baseline)`,
    `aim: added latency p50 < 2 ms, p99 < 10 ms -> ${pct(lo, 50) - pct(ld, 50) < 2 && pct(lo, 99) - pct(ld, 99) < 10 ? 'met' : 'NOT met'}`,
  ];
  console.log(lines.join('\n'));
} finally {
  await client.close();
  await pool.close();
  child.kill('SIGTERM');
}

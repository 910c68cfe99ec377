import { type AnalysisPool, createAnalysisPool, createEmbeddedInvoker } from '@trawl/analyzers';
import type { ServiceConfigFile } from '@trawl/contracts';
import { PluginCallError } from '@trawl/plugin-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createConfigSource, createJobRunner } from '../../src/index.ts';
import { email, snapshot, wf } from './helpers.ts';

const definitions = {
  module: new URL('../fixtures/pool-analyzers.ts', import.meta.url),
  ids: ['fast', 'spin', 'exits', 'context'],
};

/** The main thread's view of the same ids (versions, kinds); their code runs in the workers. */
const stub = (id: string) => ({
  kind: 'analyzer' as const,
  id,
  version: '1.0.0',
  settings: z.object({}).passthrough(),
  analyze: () => {
    throw new Error(`${id} must run in the pool`);
  },
});
const builtins: Parameters<typeof createEmbeddedInvoker>[0]['builtins'] = Object.fromEntries(
  definitions.ids.map((id) => [id, stub(id)]),
);

function serviceWith(
  analyzers: Record<string, { settings: Record<string, unknown> }>,
): ServiceConfigFile {
  return {
    version: '1',
    platform: { log_level: 'info', debug: false },
    analyzer: { timeout_ms: 5000, min_confidence: 0 },
    workflow: { default_workflow_id: 'w', max_retries: 3 },
    verdict: { thresholds: { low: 0.3, medium: 0.5, high: 0.7, critical: 0.9 } },
    analyzers: Object.fromEntries(
      Object.entries(analyzers).map(([id, a]) => [id, { enabled: true, settings: a.settings }]),
    ),
    plugins: { analyzers: {}, context_providers: {} },
  };
}

/** The largest gap between ticks of a 10 ms interval while `p` runs: is the main thread free? */
async function maxStall<T>(p: Promise<T>): Promise<{ value: T; stallMs: number }> {
  let last = performance.now();
  let worst = 0;
  const t = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 10);
  try {
    const value = await p;
    return { value, stallMs: Math.max(worst, performance.now() - last) };
  } finally {
    clearInterval(t);
  }
}

/**
 * Regression: `headers` with timeout_ms 5000 reported success after 6,038 ms, because a built-in
 * analyzer ran synchronously on the orchestrator's thread, where no timer can fire. In the analysis
 * pool a call past its deadline has its worker terminated and is reported as a timeout, as a remote
 * analyzer's would be; the job goes on with the other analyzers' results and a new worker.
 */
describe('a synchronous analyzer past its timeout_ms, in the analysis pool', () => {
  let pool: AnalysisPool;
  beforeAll(async () => {
    pool = await createAnalysisPool({ size: 1, definitions });
  }, 60_000);
  afterAll(async () => {
    await pool?.close();
  });

  const settings = { spin: { settings: { spin_ms: 60_000 } } };
  const invokerFor = (svc: ServiceConfigFile) =>
    createEmbeddedInvoker({ builtins, service: () => svc, internalApiKey: undefined, pool });

  it('is cut at its deadline and reported as a timeout; the other analyzers results stand; the worker is replaced', async () => {
    const workflow = wf({
      id: 'w',
      name: 'W',
      stages: [
        {
          name: 'offline',
          type: 'parallel',
          continue_on_failure: true,
          min_successful_analyzers: 1,
          analyzers: [
            { id: 'fast' },
            { id: 'spin', timeout_ms: 300 },
            // queued behind the stuck call in the same worker: sent to the new worker
            { id: 'context' },
          ],
        },
        {
          name: 'score',
          type: 'sequential',
          depends_on: ['offline'],
          analyzers: [{ id: 'context' }],
        },
      ],
    });
    const snap = snapshot('v1', [workflow], settings);
    const run = createJobRunner({
      invoker: invokerFor(serviceWith(settings)),
      config: createConfigSource(snap),
    });
    const before = pool.stats();
    const { value: out, stallMs } = await maxStall(run('w', email));
    expect(out?.status).toBe('completed');
    const offline = out?.trace.stages[0]?.analyzers ?? [];
    expect(offline.map((c) => [c.id, c.status])).toEqual([
      ['fast', 'success'],
      ['spin', 'timeout'],
      ['context', 'success'],
    ]);
    expect(offline[1]?.error).toBe('timed out after 300 ms');
    // cut at its deadline, not after its 60 s of work
    expect(offline[1]?.duration_ms).toBeLessThan(10_000);
    // the thread running the engine was never held by the analysis
    expect(stallMs).toBeLessThan(1_000);
    const score = out?.trace.stages[1]?.analyzers ?? [];
    expect(score.map((c) => [c.id, c.status])).toEqual([['context', 'success']]);
    expect(out?.context.score?.analyzers.context?.analyzer_details).toEqual({
      stages: ['offline'],
    });
    const after = pool.stats();
    expect(after.terminated - before.terminated).toBe(1);
    expect(after.started - before.started).toBe(1);
    expect(after.inFlight).toBe(0);
  }, 30_000);

  it('a call still waiting behind a stuck one when its own deadline passes times out without running', async () => {
    const svc = serviceWith(settings);
    const inv = invokerFor(svc);
    const before = pool.stats();
    const stuck = inv.analyze('spin', email, { timeoutMs: 400 });
    const waiting = inv.analyze('fast', email, { timeoutMs: 100 });
    const [a, b] = await Promise.allSettled([stuck, waiting]);
    expect(a.status === 'rejected' && (a.reason as PluginCallError).failure).toBe('timeout');
    expect(b.status === 'rejected' && (b.reason as PluginCallError).message).toBe(
      'analyzer fast timed out after 100 ms',
    );
    expect(pool.stats().terminated - before.terminated).toBe(1);
    // the replacement answers
    const ok = await inv.analyze('fast', email, { timeoutMs: 5_000 });
    expect(ok.confidence).toBe(0.8);
  }, 30_000);

  it('a worker that exits fails the call it was running, and is replaced', async () => {
    const svc = serviceWith({ fast: { settings: { confidence: 0.3 } } });
    const inv = invokerFor(svc);
    const before = pool.stats();
    const err = await inv.analyze('exits', email, { timeoutMs: 5_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PluginCallError);
    expect((err as PluginCallError).message).toBe(
      'analyzer exits failed: its worker thread exited (code 3)',
    );
    expect(pool.stats().exited - before.exited).toBe(1);
    // settings of the current service.yaml reach the new worker too
    const ok = await inv.analyze('fast', email, { timeoutMs: 5_000 });
    expect(ok.confidence).toBe(0.3);
  }, 30_000);
});

describe('a call queued behind a stuck one, with another worker free', () => {
  let pool: AnalysisPool;
  beforeAll(async () => {
    pool = await createAnalysisPool({ size: 2, definitions });
  }, 60_000);
  afterAll(async () => {
    await pool?.close();
  });

  it('is given to the other worker and answers, while the stuck call is cut at its deadline', async () => {
    const svc = serviceWith({ spin: { settings: { spin_ms: 60_000 } } });
    const inv = createEmbeddedInvoker({
      builtins,
      service: () => svc,
      internalApiKey: undefined,
      pool,
    });
    const before = pool.stats();
    // one batch (same Email, same turn): `fast` waits behind `spin` in the same worker
    const stuck = inv.analyze('spin', email, { timeoutMs: 3_000 });
    const queued = inv.analyze('fast', email, { timeoutMs: 2_000 });
    const [a, b] = await Promise.allSettled([stuck, queued]);
    expect(b.status === 'fulfilled' && b.value.confidence).toBe(0.8);
    expect(a.status === 'rejected' && (a.reason as PluginCallError).failure).toBe('timeout');
    expect(pool.stats().terminated - before.terminated).toBe(1);
    expect(pool.stats().inFlight).toBe(0);
  }, 30_000);
});

import { type AnalyzerAnswerInput, type Email, Job, topology } from '@trawl/contracts';
import { declareTopology } from '@trawl/platform';
import { type MemoryPlatform, memoryPlatform } from '@trawl/platform/testing';
import { createInProcessInvoker } from '@trawl/plugin-client';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  buildOrchestrator,
  createConfigSource,
  type Orchestrator,
  type OrchestratorDeps,
} from '../../src/index.ts';
import { collectEvents, email, silent, snapshot, submit, waitFor, wf } from './helpers.ts';

const simple = wf({
  id: 'simple',
  name: 'Simple',
  stages: [{ name: 's1', analyzers: [{ id: 'a' }, { id: 'b' }] }],
});

let shared: MemoryPlatform;
/** The shared in-process platform with a fresh topology (own prefix) per test. */
let p: Pick<MemoryPlatform, 'broker' | 'cache' | 'store' | 'topology'>;
let n = 0;
let orch: Orchestrator | undefined;
const calls: Record<string, number> = {};
let behaviour: Record<string, (e: Email, signal: AbortSignal) => Promise<AnalyzerAnswerInput>>;

function invoker() {
  const count =
    (id: string) =>
    (e: Email, { signal }: { signal: AbortSignal }) => {
      calls[id] = (calls[id] ?? 0) + 1;
      const b = behaviour[id];
      if (b) return b(e, signal);
      return { is_phishing: id === 'a', confidence: 0.8, indicators: [] };
    };
  return createInProcessInvoker({
    analyzers: { a: count('a'), b: count('b'), c: count('c') },
  });
}

/** Publishes the analysis request of an existing job again, as a fresh single message. */
async function requestAgain(jobId: string, emailId: string | undefined): Promise<void> {
  await p.broker.publish(p.topology.exchanges.analysis, 'analysis.requested', {
    job_id: jobId,
    email_id: emailId,
    workflow_id: 'simple',
    email,
    submitted_at: new Date().toISOString(),
  });
}

function build(over: Partial<OrchestratorDeps> = {}): Orchestrator {
  orch = buildOrchestrator({
    broker: p.broker,
    store: p.store,
    cache: p.cache,
    invoker: invoker(),
    config: createConfigSource(snapshot('v1', [simple])),
    topology: p.topology,
    logger: silent,
    options: { prefetch: 4, reaperIntervalMs: 0, requeueDelayMs: 0, storeRetryMs: 300 },
    ...over,
  });
  return orch;
}

beforeAll(async () => {
  shared = await memoryPlatform({ prefix: 'unused' });
}, 60_000);

afterAll(async () => {
  await shared?.close();
});

beforeEach(async () => {
  const t = topology(`u${++n}`);
  await declareTopology(shared.broker, t);
  p = { broker: shared.broker, cache: shared.cache, store: shared.store, topology: t };
  for (const k of Object.keys(calls)) delete calls[k];
  behaviour = {};
});

afterEach(async () => {
  await orch?.stop(1000);
  orch = undefined;
});

describe('analyzer orchestrator (memory platform)', () => {
  it('runs a job: stores result and trace, caches the job, publishes analysis.completed', async () => {
    const o = build();
    const ev = await collectEvents(p.broker, p.topology);
    await o.start();
    const id = await submit(p.store, p.broker, p.topology, 'simple');
    const e = await waitFor(() => ev.events.find((x) => x.job_id === id), 'event');
    expect(e.event).toBe('analysis.completed');
    const job = await p.store.jobs.get(id);
    expect(job?.status).toBe('completed');
    expect(job?.result?.confidence).toBeGreaterThan(0);
    expect(job?.trace?.stages[0]?.analyzers.map((a) => a.id).sort()).toEqual(['a', 'b']);
    expect(job?.trace?.config_version).toBe('v1');
    // The cached job (built from the finish statement, not read back) is what GET /analyze/{id}
    // would read from the database but its evidence, written once, to the row (issue 29); it
    // says so, and passes the Job schema the gateway checks it with.
    const text = JSON.parse((await p.cache.get(`job:${id}`)) ?? '{}');
    expect(text.evidence_stored).toBe(true);
    const cached = Job.parse(text);
    const { evidence, ...verdict } = job?.result ?? {};
    expect(evidence).toBeDefined();
    expect(cached).toEqual({ ...job, result: verdict });
    // the event carries the verdict; the evidence is read with the job
    expect(e).toMatchObject({ result: verdict, at: job?.completed_at });
    expect((e as { result?: { evidence?: unknown } }).result?.evidence).toBeUndefined();
    expect(await p.broker.queueDepth(p.topology.queues.analysisRequests)).toBe(0);
    const m = await o.app.inject({ method: 'GET', url: '/metrics' });
    expect(m.body).toContain('trawl_jobs_total{status="completed"} 1');
    expect(m.body).toContain(
      'trawl_analyzer_call_duration_seconds_count{analyzer="a",status="success"} 1',
    );
    const h = await o.app.inject({ method: 'GET', url: '/health' });
    expect(h.json()).toMatchObject({ status: 'ok', service: 'analyzer-orchestrator' });
  });

  it('a redelivered message of a finished job is not run again', async () => {
    const o = build();
    await o.start();
    const id = await submit(p.store, p.broker, p.topology, 'simple');
    await waitFor(async () => (await p.store.jobs.get(id))?.status === 'completed', 'completion');
    const job = await p.store.jobs.get(id);
    // the same message again (as after a crash between commit and ack)
    await requestAgain(id, job?.email_id);
    await waitFor(
      async () =>
        (await p.broker.queueDepth(p.topology.queues.analysisRequests)) === 0 && o.inFlight() === 0,
      'drain',
    );
    expect(calls.a).toBe(1);
    expect((await p.store.jobs.get(id))?.completed_at).toBe(job?.completed_at);
  });

  it('a finished job’s request arriving as a fresh message (a split batch) publishes its event again', async () => {
    const o = build();
    const ev = await collectEvents(p.broker, p.topology);
    await o.start();
    const id = await submit(p.store, p.broker, p.topology, 'simple');
    await waitFor(() => ev.events.find((x) => x.job_id === id), 'first event');
    const job = await p.store.jobs.get(id);
    // a redelivered batch is split into new single messages (not flagged redelivered): one of a
    // job that was stored before its event went out must still bring the event
    await requestAgain(id, job?.email_id);
    await waitFor(() => ev.events.filter((x) => x.job_id === id).length >= 2, 'event again');
    expect(
      ev.events.filter((x) => x.job_id === id).every((x) => x.event === 'analysis.completed'),
    ).toBe(true);
    expect(calls.a).toBe(1);
  });

  it('an invalid message is dead-lettered and its job failed', async () => {
    const o = build();
    const ev = await collectEvents(p.broker, p.topology);
    await o.start();
    const { randomUUID } = await import('node:crypto');
    const id = randomUUID();
    await p.store.jobs.create({ job_id: id, email_id: 'e1', workflow_id: 'simple', email });
    await p.broker.publish(p.topology.exchanges.analysis, 'analysis.requested', {
      job_id: id,
      workflow_id: 'simple',
      email: { headers: {} },
    });
    const e = await waitFor(() => ev.events.find((x) => x.job_id === id), 'event');
    expect(e.event).toBe('analysis.failed');
    const job = await p.store.jobs.get(id);
    expect(job?.status).toBe('failed');
    expect(job?.error?.code).toBe('TRAWL_ERR_ORCH_INVALID_MESSAGE');
    expect(job?.error?.message).toMatch(/\/email_id|\/email\//);
    expect(calls.a).toBeUndefined();
  });

  it('runs the Email the job row holds: the message does not carry it (claim check)', async () => {
    const seen: string[] = [];
    behaviour.a = async (e) => {
      seen.push(e.headers.subject);
      return { is_phishing: true, confidence: 0.8, indicators: [] };
    };
    const o = build();
    await o.start();
    const stored = { ...email, headers: { ...email.headers, subject: 'from the row' } };
    const id = await submit(p.store, p.broker, p.topology, 'simple', stored);
    await waitFor(async () => (await p.store.jobs.get(id))?.status === 'completed', 'completion');
    expect(seen).toEqual(['from the row']);
  });

  it('a message of an older gateway still carrying the Email runs that Email', async () => {
    const seen: string[] = [];
    behaviour.a = async (e) => {
      seen.push(e.headers.subject);
      return { is_phishing: true, confidence: 0.8, indicators: [] };
    };
    const o = build();
    const ev = await collectEvents(p.broker, p.topology);
    await o.start();
    const id = await submit(p.store, p.broker, p.topology, 'simple', email, { carryEmail: true });
    const e = await waitFor(() => ev.events.find((x) => x.job_id === id), 'event');
    expect(e.event).toBe('analysis.completed');
    expect(seen).toEqual(['Your invoice']);
  });

  it('a job whose stored Email is not a valid Email fails with a clear code, without a run', async () => {
    const o = build();
    const ev = await collectEvents(p.broker, p.topology);
    await o.start();
    const notJson = await submit(p.store, p.broker, p.topology, 'simple', email, {
      emailJson: '{"headers":',
    });
    const invalid = await submit(p.store, p.broker, p.topology, 'simple', email, {
      emailJson: JSON.stringify({ headers: { subject: 'x' }, body_text: 'y' }),
    });
    for (const id of [notJson, invalid]) {
      const e = await waitFor(() => ev.events.find((x) => x.job_id === id), 'event');
      expect(e.event).toBe('analysis.failed');
      const job = await p.store.jobs.get(id);
      expect(job?.status).toBe('failed');
      expect(job?.error?.code).toBe('TRAWL_ERR_ORCH_INVALID_STORED_EMAIL');
    }
    expect((await p.store.jobs.get(notJson))?.error?.message).toContain('not JSON');
    expect((await p.store.jobs.get(invalid))?.error?.message).toContain('/headers/sender');
    await waitFor(
      async () =>
        (await p.broker.queueDepth(p.topology.queues.analysisRequests)) === 0 && o.inFlight() === 0,
      'drain',
    );
    expect(calls.a).toBeUndefined();
  });

  it('a job naming an unknown workflow fails with a clear reason', async () => {
    const o = build();
    await o.start();
    const id = await submit(p.store, p.broker, p.topology, 'nope');
    const job = await waitFor(async () => {
      const j = await p.store.jobs.get(id);
      return j?.status === 'failed' ? j : undefined;
    }, 'failure');
    expect(job.error?.code).toBe('TRAWL_ERR_ORCH_UNKNOWN_WORKFLOW');
    expect(job.error?.message).toContain('nope');
  });

  it('a short store failure while finishing is retried in-process: one run, one stored result', async () => {
    let failures = 1;
    const store = {
      jobs: {
        ...p.store.jobs,
        finish: async (...a: Parameters<typeof p.store.jobs.finish>) => {
          if (failures-- > 0) throw new Error('database down');
          return p.store.jobs.finish(...a);
        },
      },
    };
    const o = build({ store });
    await o.start();
    const id = await submit(p.store, p.broker, p.topology, 'simple');
    await waitFor(async () => (await p.store.jobs.get(id))?.status === 'completed', 'completion');
    // The workflow ran once: the write was retried, no delivery was spent.
    expect(calls.a).toBe(1);
  });

  it('a message that keeps failing is dead-lettered after the delivery limit and its job failed', async () => {
    const store = {
      jobs: {
        ...p.store.jobs,
        // Storing a result fails; failing the job (the dead letter) goes through.
        finish: async (...a: Parameters<typeof p.store.jobs.finish>) => {
          if (a[0].outcome.status === 'completed') throw new Error('database down');
          return p.store.jobs.finish(...a);
        },
      },
    };
    const o = build({ store });
    await o.start();
    const id = await submit(p.store, p.broker, p.topology, 'simple');
    const job = await waitFor(async () => {
      const j = await p.store.jobs.get(id);
      return j?.status === 'failed' ? j : undefined;
    }, 'failure');
    expect(job.error?.code).toBe('TRAWL_ERR_DELIVERY_LIMIT');
    // RabbitMQ semantics: dead-lettered when returned more than deliveryLimit times
    expect(calls.a).toBeGreaterThanOrEqual(p.topology.deliveryLimit);
    expect(calls.a).toBeLessThanOrEqual(p.topology.deliveryLimit + 1);
  });

  it('the reaper fails jobs stuck past their deadline', async () => {
    let now = new Date('2030-01-01T00:00:00Z');
    const o = build({ clock: () => now, options: { reaperIntervalMs: 0, jobGraceMs: 1000 } });
    const { randomUUID } = await import('node:crypto');
    const id = randomUUID();
    await p.store.jobs.create({ job_id: id, email_id: 'e', workflow_id: 'simple', email });
    await p.store.jobs.markProcessing(id, new Date(now.getTime() + 5000));
    expect(await o.reapOnce()).toBe(0);
    now = new Date(now.getTime() + 7000);
    expect(await o.reapOnce()).toBe(1);
    const job = await p.store.jobs.get(id);
    expect(job?.status).toBe('failed');
    expect(job?.error?.code).toBe('TRAWL_ERR_DEADLINE');
  });

  it('the reaper fails jobs still queued long after they were stored (message never published)', async () => {
    // a row stored by a gateway that stopped before publishing its request: no message anywhere
    let now = new Date();
    const o = build({ clock: () => now, options: { reaperIntervalMs: 0, queuedMaxMs: 60_000 } });
    const { randomUUID } = await import('node:crypto');
    const id = randomUUID();
    await p.store.jobs.create({ job_id: id, email_id: 'e', workflow_id: 'simple', email });
    await o.reapOnce();
    expect((await p.store.jobs.get(id))?.status).toBe('queued');
    now = new Date(now.getTime() + 120_000);
    expect(await o.reapOnce()).toBeGreaterThanOrEqual(1);
    const job = await p.store.jobs.get(id);
    expect(job?.status).toBe('failed');
    expect(job?.error?.code).toBe('TRAWL_ERR_NOT_DISPATCHED');
  });

  it('without queuedMaxMs the reaper leaves queued jobs alone', async () => {
    const o = build({
      clock: () => new Date(Date.now() + 86_400_000 * 365),
      options: { reaperIntervalMs: 0 },
    });
    const { randomUUID } = await import('node:crypto');
    const id = randomUUID();
    await p.store.jobs.create({ job_id: id, email_id: 'e', workflow_id: 'simple', email });
    await o.reapOnce();
    expect((await p.store.jobs.get(id))?.status).toBe('queued');
  });

  it('caches analyzer answers when cache_ttl_seconds is set', async () => {
    const o = build({
      config: createConfigSource(
        snapshot('v1', [simple], { a: { settings: { cache_ttl_seconds: 60 } } }),
      ),
    });
    await o.start();
    const id1 = await submit(p.store, p.broker, p.topology, 'simple');
    await waitFor(async () => (await p.store.jobs.get(id1))?.status === 'completed', 'first');
    const id2 = await submit(p.store, p.broker, p.topology, 'simple', {
      ...email,
      analysis_context: { other: { providers: {}, analyzers: {} } },
    });
    const j2 = await waitFor(async () => {
      const j = await p.store.jobs.get(id2);
      return j?.status === 'completed' ? j : undefined;
    }, 'second');
    expect(calls.a).toBe(1);
    expect(calls.b).toBe(2);
    expect(j2.trace?.stages[0]?.analyzers.find((x) => x.id === 'a')?.cached).toBe(true);
  });

  it('config.reloaded switches later jobs to the new configuration; running jobs keep theirs', async () => {
    const v2wf = wf({
      id: 'simple',
      name: 'Simple v2',
      stages: [{ name: 's1', analyzers: [{ id: 'c' }] }],
    });
    const source = createConfigSource(snapshot('v1', [simple]), () => snapshot('v2', [v2wf]));
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    behaviour.b = async () => {
      await gate;
      return { is_phishing: false, confidence: 0.9, indicators: [] };
    };
    const o = build({ config: source });
    await o.start();
    const running = await submit(p.store, p.broker, p.topology, 'simple');
    await waitFor(() => calls.b === 1, 'running job');
    await p.broker.publish(p.topology.exchanges.control, 'config.reloaded', {
      old_version: 'v1',
      new_version: 'v2',
      at: new Date().toISOString(),
    });
    await waitFor(() => source.getConfig().version === 'v2', 'reload');
    const later = await submit(p.store, p.broker, p.topology, 'simple');
    const j2 = await waitFor(async () => {
      const j = await p.store.jobs.get(later);
      return j?.status === 'completed' ? j : undefined;
    }, 'later job');
    release();
    const j1 = await waitFor(async () => {
      const j = await p.store.jobs.get(running);
      return j?.status === 'completed' ? j : undefined;
    }, 'running job');
    expect(j1.trace?.config_version).toBe('v1');
    expect(j1.trace?.stages[0]?.analyzers.map((a) => a.id).sort()).toEqual(['a', 'b']);
    expect(j2.trace?.config_version).toBe('v2');
    expect(j2.trace?.stages[0]?.analyzers.map((a) => a.id)).toEqual(['c']);
  });

  it('stop(): in-flight jobs past the grace period go back to the queue', async () => {
    behaviour.b = (_e, signal) =>
      new Promise((_r, reject) =>
        signal.addEventListener('abort', () => reject(new Error('aborted'))),
      );
    const o = build();
    await o.start();
    const id = await submit(p.store, p.broker, p.topology, 'simple');
    await waitFor(() => calls.b === 1, 'running');
    await o.stop(100);
    orch = undefined;
    expect(o.inFlight()).toBe(0);
    expect((await p.store.jobs.get(id))?.status).toBe('processing');
    expect(await p.broker.queueDepth(p.topology.queues.analysisRequests)).toBe(1);
    // a fresh orchestrator picks it up
    behaviour = {};
    const o2 = build();
    await o2.start();
    await waitFor(async () => (await p.store.jobs.get(id))?.status === 'completed', 'completion');
  });

  it('stop(): in-flight jobs that finish within the grace period are stored', async () => {
    behaviour.b = async () => {
      await new Promise((r) => setTimeout(r, 100));
      return { is_phishing: false, confidence: 0.9, indicators: [] };
    };
    const o = build();
    await o.start();
    const id = await submit(p.store, p.broker, p.topology, 'simple');
    await waitFor(() => calls.b === 1, 'running');
    await o.stop(5000);
    orch = undefined;
    expect((await p.store.jobs.get(id))?.status).toBe('completed');
  });
});

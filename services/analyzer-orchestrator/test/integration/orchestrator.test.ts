import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type AnalysisEvent,
  type Email,
  type Job,
  type Topology,
  topology,
  type Workflow,
  type WorkflowInput,
  Workflow as WorkflowSchema,
} from '@trawl/contracts';
import { type Broker, createRabbitBroker, declareTopology, topologyNames } from '@trawl/platform';
import {
  type TestRedis,
  type TestSchema,
  testRedis,
  testSchema,
  testUrls,
  uniqueSuffix,
} from '@trawl/platform/testing';
import { createPluginClient } from '@trawl/plugin-client';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildOrchestrator,
  createConfigSource,
  type Orchestrator,
  snapshotFromFiles,
} from '../../src/index.ts';
import { killAll, startAnalyzers, startOrchestrator, tempDir, writeConfig } from './support.ts';

const silent = pino({ level: 'silent' });

function emailFor(subject: string): Email {
  return {
    headers: {
      subject,
      sender: 'billing@example.com',
      recipients: ['alice@example.org'],
      date: '2024-05-01T10:00:00Z',
    },
    body_text: 'Please find the invoice attached.',
    analysis_context: {},
  };
}

let schema: TestSchema;
let redis: TestRedis;
let broker: Broker;
let t: Topology;
let prefix: string;
let tmp: ReturnType<typeof tempDir>;
const events: AnalysisEvent[] = [];

beforeAll(async () => {
  schema = await testSchema();
  redis = testRedis();
  prefix = `orch-${uniqueSuffix()}`;
  t = topology(prefix);
  broker = createRabbitBroker({ url: testUrls().rabbitmqUrl, connectionName: 'trawl-test' });
  await declareTopology(broker, t);
  const q = `${prefix}.events`;
  await broker.assertQueue(q, { type: 'classic', exclusive: true, autoDelete: true });
  await broker.bindQueue(q, t.exchanges.results, '#');
  await broker.consume(
    q,
    async (d) => {
      events.push(d.body as AnalysisEvent);
      await d.ack();
    },
    { prefetch: 200 },
  );
  tmp = tempDir();
}, 60_000);

afterAll(async () => {
  killAll();
  if (broker) {
    const names = topologyNames(t);
    for (const q of names.queues) await broker.deleteQueue(q).catch(() => undefined);
    for (const e of names.exchanges) await broker.deleteExchange(e).catch(() => undefined);
    await broker.close();
  }
  await redis?.cleanup();
  await schema?.drop();
  tmp?.cleanup();
}, 60_000);

async function submit(workflowId: string, subject: string): Promise<string> {
  const job_id = randomUUID();
  const email = emailFor(subject);
  await schema.store.jobs.create({
    job_id,
    email_id: `em-${subject}`,
    workflow_id: workflowId,
    email,
  });
  await broker.publish(
    t.exchanges.analysis,
    t.routingKeys.analysisRequested,
    // as the gateway publishes it: the job row holds the Email (claim check, ADR 005)
    {
      job_id,
      email_id: `em-${subject}`,
      workflow_id: workflowId,
      submitted_at: new Date().toISOString(),
    },
    { messageId: job_id },
  );
  return job_id;
}

async function waitFor<T>(
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  timeoutMs = 30_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function finished(jobId: string, timeoutMs = 30_000): Promise<Job> {
  return waitFor(
    async () => {
      const j = await schema.store.jobs.get(jobId);
      return j && (j.status === 'completed' || j.status === 'failed') ? j : undefined;
    },
    `job ${jobId} to finish`,
    timeoutMs,
  );
}

function wf(input: WorkflowInput): Workflow {
  return WorkflowSchema.parse(input);
}

/** An orchestrator in this process, on the real broker/database/cache. */
function inProcess(
  workflows: Workflow[],
  analyzers: Record<string, string>,
  version = 'v1',
): Orchestrator {
  const snap = () =>
    snapshotFromFiles({
      version,
      workflows,
      service: {
        version: '1',
        platform: { log_level: 'info', debug: false },
        analyzer: { timeout_ms: 5000, min_confidence: 0 },
        workflow: { default_workflow_id: 'x', max_retries: 3 },
        verdict: { thresholds: { low: 0.3, medium: 0.5, high: 0.7, critical: 0.9 } },
        analyzers: {},
        plugins: { analyzers: {}, context_providers: {} },
      },
    });
  return buildOrchestrator({
    broker,
    store: schema.store,
    cache: redis.cache,
    invoker: createPluginClient({
      analyzers: Object.fromEntries(Object.entries(analyzers).map(([id, url]) => [id, { url }])),
    }),
    config: createConfigSource(snap()),
    topology: t,
    logger: silent,
    options: { prefetch: 8, reaperIntervalMs: 0 },
  });
}

describe('analyzer orchestrator on RabbitMQ + PostgreSQL with analyzer processes', () => {
  it('an orchestrator SIGKILLed mid-job: the job completes after redelivery, one stored result', async () => {
    const an = await startAnalyzers({ ok: 'ok', slow: 'slow:1500' });
    const cfg = join(tmp.dir, 'kill-config.json');
    writeConfig(cfg, 'k1', [
      {
        id: 'kill',
        name: 'Kill',
        stages: [{ name: 's1', analyzers: [{ id: 'ok' }, { id: 'slow' }] }],
      },
    ]);
    const settings = {
      prefix,
      schema: schema.schema,
      redisPrefix: redis.prefix,
      analyzers: { ok: an.url('ok'), slow: an.url('slow') },
      configFile: cfg,
    };
    const a = await startOrchestrator(tmp.dir, 'kill-a', settings);
    const id = await submit('kill', 'kill-1');
    await waitFor(async () => (await an.calls()).slow?.['kill-1'] === 1, 'the slow call');
    expect((await schema.store.jobs.get(id))?.status).toBe('processing');
    a.child.kill('SIGKILL');
    await a.exited;
    const b = await startOrchestrator(tmp.dir, 'kill-b', settings);
    const job = await finished(id);
    expect(job.status).toBe('completed');
    expect(job.result).toBeDefined();
    expect((await an.calls()).slow?.['kill-1']).toBe(2);
    await waitFor(() => events.some((e) => e.job_id === id), 'the event');
    await new Promise((r) => setTimeout(r, 300));
    expect(events.filter((e) => e.job_id === id).map((e) => e.event)).toEqual([
      'analysis.completed',
    ]);
    const cached = JSON.parse((await redis.cache.get(`job:${id}`)) ?? '{}') as Job;
    expect(cached.status).toBe('completed');
    b.child.kill('SIGTERM');
    expect(await b.exited).toBe(0);
    an.stop();
  }, 90_000);

  it('two orchestrators on one queue share 200 jobs: 200 results, none processed twice', async () => {
    // the same analyzer behind two paths, one per orchestrator, to see who ran what
    const an = await startAnalyzers({ a1: 'ok', a2: 'ok', b1: 'phish', b2: 'phish' });
    const cfg = join(tmp.dir, 'share-config.json');
    writeConfig(cfg, 's1', [
      {
        id: 'share',
        name: 'Share',
        stages: [{ name: 's1', analyzers: [{ id: 'a' }, { id: 'b' }] }],
      },
    ]);
    const base = {
      prefix,
      schema: schema.schema,
      redisPrefix: redis.prefix,
      configFile: cfg,
      prefetch: 8,
    };
    const o1 = await startOrchestrator(tmp.dir, 'share-1', {
      ...base,
      analyzers: { a: an.url('a1'), b: an.url('b1') },
    });
    const o2 = await startOrchestrator(tmp.dir, 'share-2', {
      ...base,
      analyzers: { a: an.url('a2'), b: an.url('b2') },
    });
    const ids: string[] = [];
    for (let i = 0; i < 200; i++) ids.push(await submit('share', `share-${i}`));
    await waitFor(
      async () => {
        const r = await schema.sql.query<{ n: string }>(
          `SELECT count(*)::text AS n FROM jobs WHERE workflow_id = 'share' AND status = 'completed'`,
        );
        return r.rows[0]?.n === '200';
      },
      '200 completed jobs',
      60_000,
    );
    const calls = await an.calls();
    for (let i = 0; i < 200; i++) {
      const s = `share-${i}`;
      const a = (calls.a1?.[s] ?? 0) + (calls.a2?.[s] ?? 0);
      const b = (calls.b1?.[s] ?? 0) + (calls.b2?.[s] ?? 0);
      expect([s, a, b]).toEqual([s, 1, 1]);
    }
    const byFirst = Object.keys(calls.a1 ?? {}).length;
    const bySecond = Object.keys(calls.a2 ?? {}).length;
    expect(byFirst + bySecond).toBe(200);
    expect(byFirst).toBeGreaterThan(0);
    expect(bySecond).toBeGreaterThan(0);
    await waitFor(
      () => ids.every((id) => events.some((e) => e.job_id === id)),
      'every completion event',
    );
    o1.child.kill('SIGTERM');
    o2.child.kill('SIGTERM');
    expect(await o1.exited).toBe(0);
    expect(await o2.exited).toBe(0);
    an.stop();
  }, 120_000);

  it('hanging, 500, garbage and down analyzers are handled per strategy, never stuck', async () => {
    const an = await startAnalyzers({ ok: 'ok', hang: 'hang', err: '500', bad: 'garbage' });
    const urls = {
      ok: an.url('ok'),
      hang: an.url('hang'),
      err: an.url('err'),
      bad: an.url('bad'),
      down: 'http://127.0.0.1:1/down',
    };
    const workflows = [
      wf({
        id: 'tolerant',
        name: 'Skips every failure',
        stages: [
          {
            name: 's1',
            analyzers: [
              { id: 'ok' },
              { id: 'hang', timeout_ms: 300 },
              { id: 'err' },
              { id: 'bad' },
              { id: 'down', timeout_ms: 2000 },
            ],
          },
        ],
      }),
      wf({
        id: 'strict',
        name: 'Fails on a 500',
        stages: [
          { name: 's1', analyzers: [{ id: 'ok' }, { id: 'err', failure_strategy: 'fail' }] },
        ],
      }),
      wf({
        id: 'retry-required',
        name: 'Retries garbage, then fails',
        stages: [
          {
            name: 's1',
            analyzers: [
              { id: 'ok' },
              {
                id: 'bad',
                required: true,
                failure_strategy: 'retry',
                retry_config: {
                  max_attempts: 2,
                  backoff_ms: 10,
                  max_backoff_ms: 20,
                  exponential_backoff: false,
                },
              },
            ],
          },
        ],
      }),
      wf({
        id: 'hang-required',
        name: 'A required analyzer hangs',
        stages: [
          {
            name: 's1',
            analyzers: [{ id: 'ok' }, { id: 'hang', required: true, timeout_ms: 300 }],
          },
        ],
      }),
      wf({
        id: 'down-required',
        name: 'A required analyzer is down',
        stages: [
          {
            name: 's1',
            analyzers: [{ id: 'ok' }, { id: 'down', required: true, timeout_ms: 2000 }],
          },
        ],
      }),
    ];
    const o = inProcess(workflows, urls);
    await o.start();
    try {
      const tolerant = await finished(await submit('tolerant', 'fm-tolerant'));
      expect(tolerant.status).toBe('completed');
      const calls = Object.fromEntries(tolerant.trace!.stages[0]!.analyzers.map((c) => [c.id, c]));
      expect(calls.ok?.status).toBe('success');
      expect(calls.hang?.status).toBe('timeout');
      expect(calls.err?.status).toBe('failed');
      expect(calls.err?.error).toMatch(/analyzer err answered 500/);
      expect(calls.bad?.status).toBe('failed');
      expect(calls.bad?.error).toMatch(/analyzer bad answered invalid JSON/);
      expect(calls.down?.status).toBe('failed');
      expect(calls.down?.error).toMatch(/analyzer down is unreachable/);

      const strict = await finished(await submit('strict', 'fm-strict'));
      expect(strict.status).toBe('failed');
      expect(strict.error?.analyzer ?? strict.error?.message).toMatch(/err/);
      expect(JSON.stringify(strict.trace)).toMatch(/answered 500/);

      const retry = await finished(await submit('retry-required', 'fm-retry'));
      expect(retry.status).toBe('failed');
      const bad = retry.trace!.stages[0]!.analyzers.find((c) => c.id === 'bad');
      expect(bad?.attempts).toBe(2);
      expect(bad?.error).toMatch(/invalid JSON/);
      expect((await an.calls()).bad?.['fm-retry']).toBe(2);

      const hang = await finished(await submit('hang-required', 'fm-hang'));
      expect(hang.status).toBe('failed');
      expect(hang.trace!.stages[0]!.analyzers.find((c) => c.id === 'hang')?.status).toBe('timeout');
      expect(hang.error?.message).toBeTruthy();

      const down = await finished(await submit('down-required', 'fm-down'));
      expect(down.status).toBe('failed');
      expect(JSON.stringify(down.trace)).toMatch(/unreachable/);

      // /metrics after these jobs (issue 19: no outcome, verdict, duration or per-analyzer series).
      const text = (await o.app.inject({ method: 'GET', url: '/metrics' })).body;
      const value = (name: string, ...labels: string[]) => {
        const line = text
          .split('\n')
          .find((l) => l.startsWith(`${name}{`) && labels.every((x) => l.includes(x)));
        return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
      };
      expect(value('trawl_jobs_total', 'status="completed"')).toBe(1);
      expect(value('trawl_jobs_total', 'status="failed"')).toBe(4);
      expect(value('trawl_job_verdicts_total', 'workflow="tolerant"')).toBe(1);
      expect(value('trawl_job_duration_seconds_count', 'status="failed"')).toBe(4);
      expect(
        value('trawl_stage_duration_seconds_count', 'workflow="strict"', 'status="failed"'),
      ).toBe(1);
      expect(value('trawl_analyzer_errors_total', 'analyzer="hang"', 'kind="timeout"')).toBe(2);
      expect(value('trawl_analyzer_errors_total', 'analyzer="bad"', 'kind="error"')).toBe(3);
      expect(value('trawl_analyzer_errors_total', 'analyzer="down"', 'kind="error"')).toBe(2);
      expect(value('trawl_analyzer_errors_total', 'analyzer="ok"')).toBeUndefined();
      expect(value('trawl_queue_depth', 'analysis.requests"')).toBe(0);
    } finally {
      await o.stop(2000);
      an.stop();
    }
  }, 90_000);

  it('a reload while jobs run: running jobs finish on the old configuration, new ones use the new', async () => {
    const an = await startAnalyzers({ old: 'slow:1500', fresh: 'ok' });
    const cfg = join(tmp.dir, 'reload-config.json');
    writeConfig(cfg, 'r1', [
      { id: 'reload', name: 'Reload v1', stages: [{ name: 's1', analyzers: [{ id: 'old' }] }] },
    ]);
    const settings = {
      prefix,
      schema: schema.schema,
      redisPrefix: redis.prefix,
      analyzers: { old: an.url('old'), fresh: an.url('fresh') },
      configFile: cfg,
    };
    const o = await startOrchestrator(tmp.dir, 'reload', settings);
    const first = await submit('reload', 'reload-1');
    await waitFor(async () => (await an.calls()).old?.['reload-1'] === 1, 'the first job running');
    writeConfig(cfg, 'r2', [
      { id: 'reload', name: 'Reload v2', stages: [{ name: 's1', analyzers: [{ id: 'fresh' }] }] },
    ]);
    expect(JSON.parse(readFileSync(cfg, 'utf8')).version).toBe('r2');
    await broker.publish(t.exchanges.control, t.routingKeys.configReloaded, {
      old_version: 'r1',
      new_version: 'r2',
      at: new Date().toISOString(),
    });
    await waitFor(() => o.lines.includes('RELOADED r2'), 'the reload to be applied');
    const second = await submit('reload', 'reload-2');
    const j2 = await finished(second);
    const j1 = await finished(first);
    expect(j1.status).toBe('completed');
    expect(j1.trace?.config_version).toBe('r1');
    expect(j1.trace?.stages[0]?.analyzers.map((c) => c.id)).toEqual(['old']);
    expect(j2.status).toBe('completed');
    expect(j2.trace?.config_version).toBe('r2');
    expect(j2.trace?.stages[0]?.analyzers.map((c) => c.id)).toEqual(['fresh']);
    // the second job finished while the first was still running on the old configuration
    expect(Date.parse(j2.completed_at ?? '')).toBeLessThan(Date.parse(j1.completed_at ?? ''));
    o.child.kill('SIGTERM');
    expect(await o.exited).toBe(0);
    an.stop();
  }, 90_000);

  it('SIGTERM: stops consuming and finishes the job in flight within the grace period', async () => {
    const an = await startAnalyzers({ slow: 'slow:1000' });
    const cfg = join(tmp.dir, 'term-config.json');
    writeConfig(cfg, 't1', [
      { id: 'term', name: 'Term', stages: [{ name: 's1', analyzers: [{ id: 'slow' }] }] },
    ]);
    const o = await startOrchestrator(tmp.dir, 'term', {
      prefix,
      schema: schema.schema,
      redisPrefix: redis.prefix,
      analyzers: { slow: an.url('slow') },
      configFile: cfg,
      graceMs: 10_000,
    });
    const id = await submit('term', 'term-1');
    await waitFor(async () => (await an.calls()).slow?.['term-1'] === 1, 'the job running');
    o.child.kill('SIGTERM');
    expect(await o.exited).toBe(0);
    expect((await schema.store.jobs.get(id))?.status).toBe('completed');
    an.stop();
  }, 60_000);
});

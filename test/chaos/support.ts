/**
 * Shared pieces of the chaos tests: a scale-out Trawl (bench/e2e/cluster.ts) on the local servers
 * with a small chaos configuration, a fault analyzer process, synthetic mail, a bounded load with a
 * fault injected while it runs, and the final accounting (submitted = completed + failed, 0 lost,
 * 0 analyzed twice, nothing half-written).
 */
import { execFile, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { createPgClient } from '@trawl/platform';
import { type Cluster, ROOT, startCluster } from '../../bench/e2e/cluster.ts';
import type { CorpusMessage } from '../../bench/e2e/corpus.ts';
import { type SubmitStats, submitAll } from '../../bench/e2e/load.ts';
import { type ResultWatcher, watchResults } from '../../bench/e2e/watcher.ts';

export const run = promisify(execFile);

interface FaultAnalyzers {
  base: string;
  calls(): Promise<{ flaky: number; hang: number; probe: number }>;
  stop(): void;
}

async function startFaultAnalyzers(): Promise<FaultAnalyzers> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'test/chaos/fixtures/fault-analyzer.ts')],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const line = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout });
    const timer = setTimeout(() => reject(new Error('fault analyzer did not start')), 30_000);
    rl.once('line', (l) => {
      clearTimeout(timer);
      resolve(l);
    });
    child.once('exit', (c) => reject(new Error(`fault analyzer exited with ${c}`)));
  });
  const { port } = JSON.parse(line) as { port: number };
  const base = `http://127.0.0.1:${port}`;
  return {
    base,
    async calls() {
      const r = await fetch(`${base}/_calls`);
      return (await r.json()) as { flaky: number; hang: number; probe: number };
    },
    stop: () => {
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

const BUILTIN_TIMEOUT_MS = 10_000;

function chaosWorkflows(): string {
  const stage = (extra: string) => `    timeout_ms: 30000
    stages:
      - name: offline
        type: parallel
        depends_on: []
        aggregation_method: weighted_average
        continue_on_failure: true
        min_successful_analyzers: 1
        analyzers:
          - { id: headers, weight: 1.0, timeout_ms: ${BUILTIN_TIMEOUT_MS} }
          - { id: rules, weight: 0.6, timeout_ms: ${BUILTIN_TIMEOUT_MS} }
          - ${extra}
`;
  return [
    '  - id: chaos',
    '    name: Chaos',
    stage('{ id: probe, weight: 0.1, timeout_ms: 5000 }'),
    '  - id: chaos-flaky',
    '    name: Chaos flaky',
    stage(
      '{ id: flaky, weight: 0.5, timeout_ms: 5000, failure_strategy: retry, retry_config: { max_attempts: 3, backoff_ms: 10 } }',
    ),
    '  - id: chaos-hang',
    '    name: Chaos hang',
    stage('{ id: hang, weight: 0.5, timeout_ms: 1000, failure_strategy: skip }'),
  ].join('\n');
}

export interface ChaosEnv {
  cluster: Cluster;
  watcher: ResultWatcher;
  faults: FaultAnalyzers;
  /** Every job id the gateway accepted in this environment. */
  accepted: Set<string>;
  close(): Promise<void>;
}

export async function startChaos(opts: { orchestrators: number }): Promise<ChaosEnv> {
  const faults = await startFaultAnalyzers();
  let cluster: Cluster | undefined;
  try {
    const service = `${readFileSync(join(ROOT, 'config/defaults/service.yaml'), 'utf8')}
plugins:
  analyzers:
    flaky: { enabled: true, url: "${faults.base}/flaky" }
    hang: { enabled: true, url: "${faults.base}/hang" }
    probe: { enabled: true, url: "${faults.base}/probe" }
`;
    const workflows = `${readFileSync(join(ROOT, 'config/defaults/workflows.yaml'), 'utf8')}
${chaosWorkflows()}`;
    const tmp = join(
      '/tmp',
      `trawl-chaos-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
    );
    writeFileSync(`${tmp}-service.yaml`, service);
    writeFileSync(`${tmp}-workflows.yaml`, workflows);
    cluster = await startCluster({
      mode: 'scale-out',
      orchestrators: opts.orchestrators,
      redisDb: 15,
      logLevel: 'warning',
      configFile: `${tmp}-service.yaml`,
      workflowsFile: `${tmp}-workflows.yaml`,
      env: {
        TRAWL_ORCHESTRATOR_PREFETCH: '8',
        TRAWL_REAPER_INTERVAL_MS: '2000',
        TRAWL_JOB_GRACE_MS: '2000',
        TRAWL_ORCHESTRATOR_SHUTDOWN_GRACE_MS: '2000',
      },
    });
    const watcher = await watchResults(cluster.rabbitmqUrl, cluster.prefix);
    const c = cluster;
    return {
      cluster: c,
      watcher,
      faults,
      accepted: new Set(),
      async close() {
        await watcher.close().catch(() => {});
        await c.close().catch(() => {});
        faults.stop();
        await run('rm', ['-f', `${tmp}-service.yaml`, `${tmp}-workflows.yaml`]).catch(() => {});
      },
    };
  } catch (e) {
    faults.stop();
    await cluster?.close().catch(() => {});
    throw e;
  }
}

let serial = 0;
/** Small synthetic messages with unique subjects (no corpus needed). */
export function syntheticMessages(n: number, tag: string): CorpusMessage[] {
  const out: CorpusMessage[] = [];
  for (let i = 0; i < n; i++) {
    serial += 1;
    const phish = i % 2 === 0;
    const raw = [
      `From: ${phish ? '"PayPal Security" <security@paypa1-verify.xyz>' : 'Alice <alice@example.org>'}`,
      'To: bob@example.com',
      `Subject: chaos ${tag} ${serial}${phish ? ' - urgent: verify your account' : ' - lunch'}`,
      `Date: ${new Date().toUTCString()}`,
      `Message-ID: <chaos-${tag}-${serial}-${Date.now()}@example.org>`,
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      phish
        ? 'Your account is suspended. Verify your password within 24 hours at http://paypa1-verify.xyz/login or it will be closed.'
        : 'Hi Bob, shall we have lunch on Thursday? Alice',
      '',
    ].join('\r\n');
    out.push({
      name: `${tag}-${serial}`,
      label: phish ? 'phishing' : 'ham',
      raw: Buffer.from(raw),
    });
  }
  return out;
}

export interface LoadRun {
  stats: SubmitStats;
  /** Answers by status while the fault was on. */
  duringFault: Record<string, number>;
}

/**
 * Submits `count` messages at `rate` msgs/s; once `faultAfter` were accepted, runs `fault` while the
 * load goes on (answers during it are tallied apart). Bounded by the count and `deadlineMs`.
 */
export async function loadWithFault(
  env: ChaosEnv,
  o: {
    count: number;
    rate: number;
    workflowId: string;
    faultAfter?: number;
    fault?: () => Promise<void>;
    deadlineMs?: number;
  },
): Promise<LoadRun> {
  const msgs = syntheticMessages(o.count, o.workflowId);
  const duringFault: Record<string, number> = {};
  let faultOn = false;
  let answered = 0;
  let faultDone: Promise<void> = Promise.resolve();
  let faultStarted = false;
  const statsP = submitAll(msgs, {
    gatewayUrl: env.cluster.gatewayUrl,
    headers: env.cluster.headers(),
    rate: o.rate,
    concurrency: 32,
    workflowId: o.workflowId,
    deadline: performance.now() + (o.deadlineMs ?? 60_000),
    onAccepted: (id) => env.accepted.add(id),
    onAnswer: (status) => {
      answered += 1;
      if (faultOn) duringFault[String(status)] = (duringFault[String(status)] ?? 0) + 1;
      if (o.fault && !faultStarted && answered >= (o.faultAfter ?? 0)) {
        faultStarted = true;
        faultOn = true;
        faultDone = o.fault().finally(() => {
          faultOn = false;
        });
      }
    },
  });
  const stats = await statsP;
  await faultDone;
  for (const id of stats.accepted.keys()) env.accepted.add(id);
  return { stats, duringFault };
}

export interface Counts {
  submitted: number;
  rejected: number;
  completed: number;
  failed: number;
  lost: number;
  /** Accepted jobs without any verdict event on trawl.results. */
  noEvent: number;
  /** Jobs whose verdict event was delivered more than once (same outcome). */
  eventAgain: number;
  /** Jobs with two different published outcomes (two runs both finished). */
  analyzedTwice: number;
  /** Jobs started more than once (attempts > 1: redelivered after the fault). */
  restarted: number;
  /** Job rows in the database the gateway did not accept (half-written submissions). */
  halfWritten: number;
}

/**
 * Waits (bounded) until every accepted job of `run` is finished in PostgreSQL and has its verdict
 * event, then counts. Prints one line `chaos <name>: ...`.
 */
export async function account(
  env: ChaosEnv,
  name: string,
  r: LoadRun,
  waitMs = 90_000,
): Promise<Counts> {
  const ids = [...r.stats.accepted.keys()];
  const sql = createPgClient({ url: env.cluster.databaseUrl, max: 1 });
  const t0 = Date.now();
  const until = t0 + waitMs;
  try {
    let rows: { job_id: string; status: string; attempts: number }[] = [];
    for (;;) {
      try {
        rows = (
          await sql.query<{ job_id: string; status: string; attempts: number }>(
            'SELECT job_id::text, status, attempts FROM jobs',
          )
        ).rows;
      } catch {
        rows = [];
      }
      const byId = new Map(rows.map((x) => [x.job_id, x]));
      const unfinished = ids.filter((id) => {
        const s = byId.get(id)?.status;
        return s !== 'completed' && s !== 'failed';
      });
      const eventsMissing = ids.filter((id) => !env.watcher.verdicts.has(id));
      if ((unfinished.length === 0 && eventsMissing.length === 0) || Date.now() > until) break;
      await new Promise((res) => setTimeout(res, 500));
    }
    const waited = Date.now() - t0;
    // a short grace for late duplicates
    await new Promise((res) => setTimeout(res, 1000));
    const byId = new Map(rows.map((x) => [x.job_id, x]));
    const c: Counts = {
      submitted: ids.length,
      rejected: Object.values(r.stats.rejected).reduce((a, b) => a + b, 0),
      completed: 0,
      failed: 0,
      lost: 0,
      noEvent: 0,
      eventAgain: 0,
      analyzedTwice: 0,
      restarted: 0,
      halfWritten: rows.filter((x) => !env.accepted.has(x.job_id)).length,
    };
    for (const id of ids) {
      const row = byId.get(id);
      if (row?.status === 'completed') c.completed += 1;
      else if (row?.status === 'failed') c.failed += 1;
      else c.lost += 1;
      if ((row?.attempts ?? 0) > 1) c.restarted += 1;
      const v = env.watcher.verdicts.get(id);
      if (!v) c.noEvent += 1;
      else {
        if (v.count > 1) c.eventAgain += 1;
        if (v.outcomes.size > 1) c.analyzedTwice += 1;
      }
    }
    const codes: Record<string, number> = {};
    try {
      const f = await sql.query<{ job_id: string; code: string | null }>(
        "SELECT job_id::text, error->>'code' AS code FROM jobs WHERE status = 'failed'",
      );
      const mine = new Set(ids);
      for (const x of f.rows) {
        if (mine.has(x.job_id)) codes[x.code ?? '?'] = (codes[x.code ?? '?'] ?? 0) + 1;
      }
    } catch {
      // reported without the codes
    }
    const fault = Object.entries(r.duringFault)
      .map(([k, v]) => `${k}:${v}`)
      .join(',');
    process.stdout.write(
      `chaos ${name}: submitted=${c.submitted} completed=${c.completed} failed=${c.failed} lost=${c.lost} analyzed_twice=${c.analyzedTwice} no_event=${c.noEvent} event_again=${c.eventAgain} restarted=${c.restarted} half_written=${c.halfWritten} rejected=${c.rejected} answers_during_fault={${fault}} settled_after_load_ms=${waited}${c.failed ? ` failed_codes=${JSON.stringify(codes)}` : ''}\n`,
    );
    return c;
  } finally {
    await sql.close();
  }
}

/** The invariants every chaos test ends with. */
export function invariants(c: Counts): Record<string, number> {
  return {
    unaccounted: c.submitted - (c.completed + c.failed),
    lost: c.lost,
    analyzedTwice: c.analyzedTwice,
    noEvent: c.noEvent,
    halfWritten: c.halfWritten,
  };
}
export const ZERO = { unaccounted: 0, lost: 0, analyzedTwice: 0, noEvent: 0, halfWritten: 0 };

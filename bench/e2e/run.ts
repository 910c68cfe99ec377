/**
 * `pnpm bench:e2e`: Trawl end to end on the local PostgreSQL, Redis and RabbitMQ. For each
 * configuration (scale-out with 1 and 2 orchestrators, each service its own process; embedded mode,
 * the all-in-one process on the same servers) it submits the corpus as raw mail to
 * POST /api/v1/analyze/raw at a fixed offered rate, then as fast as the gateway accepts them, waits
 * for every verdict on trawl.results, and prints msgs/s, submit-to-verdict latency, CPU seconds per
 * message and peak RSS per service. Every phase is bounded in time.
 *
 * Only completed jobs count as throughput (a failed job is work not done). The baseline, measured in
 * the same run on the same messages before the clusters start, is the analysis alone: the same
 * parse and default workflow in-process over one worker thread per core (`pnpm eval`'s runner), with
 * no gateway, broker, store or cache; the headline prints Trawl's msgs/s beside it.
 *
 * The anchor, in the same run on the same messages (issue 29): Debian's Rspamd started by
 * bench/rspamd.ts (normal worker on 127.0.0.1:11333, network modules off), each message POSTed to
 * its `/checkv2` with the same closed loop; skipped with the reason when Rspamd is absent.
 *
 * Options: --rate=100 (offered msgs/s) --concurrency=64 (closed loop) --limit=N (first N of each
 * half of the corpus) --warmup=40 (messages each side is warmed with, the corpus over again)
 * --configs=scale-out-1,scale-out-2,embedded --profile (node --cpu-prof into
 * bench/e2e/profiles) --log-level=info --baseline=false (skip the baseline)
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { corpusDir } from '@trawl/config';
import { fetchBounded } from '@trawl/contracts';
import { createPgClient } from '@trawl/platform';
import { analysisAlone } from '../analysis-alone.ts';
import { RSPAMD_EXPECTED, startRspamd } from '../rspamd.ts';
import { pidsNamed, since, snapshot } from '../support/cpu-accounting.ts';
import { type Cluster, ROOT, type ServiceKind, startCluster } from './cluster.ts';
import { type CorpusMessage, loadCorpus } from './corpus.ts';
import { latencyOf, submitAll } from './load.ts';
import { sampleProc } from './proc-stats.ts';
import { type ResultWatcher, watchResults } from './watcher.ts';

const args = new Map(
  process.argv.slice(2).map((a) => {
    const [k, ...v] = a.replace(/^--/, '').split('=');
    return [k as string, v.length ? v.join('=') : 'true'];
  }),
);
const RATE = Number(args.get('rate') ?? 100);
const CONCURRENCY = Number(args.get('concurrency') ?? 64);
const LIMIT = args.has('limit') ? Number(args.get('limit')) : undefined;
const CONFIGS = (args.get('configs') ?? 'scale-out-1,scale-out-2,embedded').split(',');
const PROFILE = args.has('profile');
const LOG_LEVEL = (args.get('log-level') ?? 'info') as 'info';
const PHASE_MS = 180_000;
/** Messages each side (Trawl's services, Rspamd) is warmed with, the corpus over again (default 40). */
const WARMUP = Math.max(1, Number(args.get('warmup') ?? 40));
/** The first `n` messages of the corpus, taken over again as often as it needs. */
const warmupOf = <T>(msgs: T[], n: number): T[] =>
  Array.from({ length: n }, (_, i) => msgs[i % msgs.length] as T);

/** The servers' processes (all of their users on this machine). */
const serverPids = () => ({
  PostgreSQL: pidsNamed('postgres'),
  RabbitMQ: pidsNamed('beam.smp'),
  Redis: pidsNamed('redis-server'),
});

/** Busy and total jiffies of all cores (/proc/stat); zeros where it is unreadable. */
function machineTicks(): { busy: number; total: number } {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    const total = v.reduce((a, b) => a + b, 0);
    const idle = (v[3] ?? 0) + (v[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return { busy: 0, total: 0 };
  }
}

function cpuOf(c: Cluster): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of c.services) out[s.name] = sampleProc(s.pid)?.cpuSeconds ?? 0;
  return out;
}

async function phase(
  config: string,
  name: string,
  c: Cluster,
  w: ResultWatcher,
  msgs: CorpusMessage[],
  rate: number | undefined,
) {
  const cpu0 = cpuOf(c);
  const servers0 = snapshot(serverPids());
  const self0 = process.cpuUsage();
  const machine0 = machineTicks();
  const deadline = performance.now() + PHASE_MS;
  const s = await submitAll(msgs, {
    gatewayUrl: c.gatewayUrl,
    headers: c.headers(),
    concurrency: rate === undefined ? CONCURRENCY : 256,
    deadline,
    ...(rate === undefined ? {} : { rate }),
  });
  await w.waitFor(s.accepted.keys(), deadline);
  const cpu1 = cpuOf(c);
  const servers = since(servers0, serverPids());
  const self = process.cpuUsage(self0);
  const machine1 = machineTicks();
  const elsewhere: Record<string, number> = {};
  for (const [k, ms] of Object.entries(servers)) elsewhere[k] = ms / 1000;
  elsewhere['bench (load + watcher)'] = (self.user + self.system) / 1e6;
  const machineBusy =
    (machine1.busy - machine0.busy) / Math.max(1, machine1.total - machine0.total);
  const lat: number[] = [];
  let completed = 0;
  let failed = 0;
  let last = s.startedAt;
  for (const [id, sub] of s.accepted) {
    const v = w.verdicts.get(id);
    if (!v) continue;
    if (v.event !== 'analysis.completed') {
      failed += 1;
      continue;
    }
    // only completed jobs are throughput and latency
    completed += 1;
    lat.push(v.at - sub.sentAt);
    if (v.at > last) last = v.at;
  }
  lat.sort((a, b) => a - b);
  const cpu: Record<string, number> = {};
  let total = 0;
  for (const k of Object.keys(cpu1)) {
    cpu[k] = (cpu1[k] ?? 0) - (cpu0[k] ?? 0);
    total += cpu[k] as number;
  }
  return {
    config,
    phase: name,
    submitted: s.accepted.size,
    rejected: s.rejected,
    completed,
    failed,
    missing: s.accepted.size - completed - failed,
    msgsPerSec: completed / ((last - s.startedAt) / 1000),
    /** Submission to verdict, of the completed jobs. */
    latencyMs: latencyOf(lat),
    cpuPerMsgMs: completed > 0 ? (total / completed) * 1000 : Number.NaN,
    cpu,
    /** CPU seconds of the servers Trawl uses and of this bench process (load + result watcher). */
    elsewhere,
    /** Share of all cores busy (whole machine, /proc/stat) during the phase. */
    machineBusy,
  };
}
/** What one phase of one configuration measured. */
type PhaseResult = Awaited<ReturnType<typeof phase>>;

/** Messages per second the measured CPU cost allows when the machine is not shared. */
function capacity(r: PhaseResult): number {
  const cores = availableParallelism();
  let byCore = Number.POSITIVE_INFINITY;
  for (const v of Object.values(r.cpu)) {
    if (v > 0) byCore = Math.min(byCore, r.completed / v);
  }
  return Math.min((cores * 1000) / r.cpuPerMsgMs, byCore);
}

const f = (n: number, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');

function print(r: PhaseResult): void {
  const rej = Object.entries(r.rejected)
    .map(([k, v]) => `${k}:${v}`)
    .join(',');
  process.stdout.write(
    `  ${r.phase.padEnd(22)} msgs/s=${f(r.msgsPerSec, 1).padStart(6)}  p50=${f(r.latencyMs.p50)}ms p95=${f(r.latencyMs.p95)}ms p99=${f(r.latencyMs.p99)}ms  cpu/msg=${f(r.cpuPerMsgMs, 2)}ms  submitted=${r.submitted} completed=${r.completed} failed=${r.failed} missing=${r.missing}${rej ? ` rejected=${rej}` : ''}\n`,
  );
  process.stdout.write(
    `    cpu-bound estimate on an idle machine: ${f(capacity(r), 0)} msgs/s (${availableParallelism()} cores / cpu per msg, at most one core per process); load average now ${loadavg()[0]?.toFixed(1)}\n`,
  );
  process.stdout.write(
    `    cpu s by service: ${Object.entries(r.cpu)
      .map(([k, v]) => `${k}=${v.toFixed(1)}`)
      .join(' ')}\n`,
  );
  process.stdout.write(
    `    cpu s elsewhere: ${Object.entries(r.elsewhere)
      .map(([k, v]) => `${k}=${v.toFixed(1)}`)
      .join(' ')}; whole machine ${f(r.machineBusy * 100)}% busy\n`,
  );
}

interface DbCounters {
  xact: number;
  inserted: number;
  updated: number;
  deleted: number;
}

/**
 * PostgreSQL's counters for the cluster's own database (pg_stat_database): every transaction and
 * row written there is Trawl's, whatever else the server does. Backends report their counters
 * when idle for 10 s at the latest, so the reading after the load waits that long first.
 */
async function dbCounters(c: Cluster): Promise<DbCounters> {
  const sql = createPgClient({ url: c.databaseUrl, max: 1 });
  try {
    const r = await sql.query<DbCounters>(
      `SELECT xact_commit::float8 AS xact, tup_inserted::float8 AS inserted,
              tup_updated::float8 AS updated, tup_deleted::float8 AS deleted
         FROM pg_stat_database WHERE datname = current_database()`,
    );
    return r.rows[0] as DbCounters;
  } finally {
    await sql.close();
  }
}

async function runConfig(config: string, msgs: CorpusMessage[]): Promise<PhaseResult[]> {
  const embedded = config === 'embedded';
  const n = embedded ? 0 : Number(config.split('-').pop());
  const profDir = join(ROOT, 'bench', 'e2e', 'profiles', config);
  if (PROFILE) mkdirSync(profDir, { recursive: true });
  const flags = [
    ...(PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []),
    ...(args.get('node-flags')?.split(' ').filter(Boolean) ?? []),
  ];
  const nodeFlags: Partial<Record<ServiceKind, string[]>> = {
    gateway: flags,
    analyzers: flags,
    orchestrator: flags,
    embedded: flags,
  };
  const t0 = performance.now();
  const c = await startCluster({
    mode: embedded ? 'embedded' : 'scale-out',
    orchestrators: n,
    logLevel: LOG_LEVEL,
    nodeFlags,
  });
  const w = await watchResults(c.rabbitmqUrl, c.prefix, { durable: false });
  process.stdout.write(
    `${config}: ${c.services.map((s) => s.name).join(', ')} up in ${f(performance.now() - t0)} ms\n`,
  );
  try {
    // warm-up (JIT, connection pools, analyzer settings): not measured
    await phase(config, 'warm-up', c, w, warmupOf(msgs, WARMUP), undefined);
    await new Promise((r) => setTimeout(r, 11_000));
    const db0 = await dbCounters(c);
    const fixed = await phase(config, `offered ${RATE} msgs/s`, c, w, msgs, RATE);
    print(fixed);
    const max = await phase(config, `as fast as accepted`, c, w, msgs, undefined);
    print(max);
    const rss = c.services
      .map((s) => `${s.name}=${f(sampleProc(s.pid)?.peakRssMiB ?? Number.NaN)}MiB`)
      .join(' ');
    process.stdout.write(`  peak RSS: ${rss}\n`);
    await new Promise((r) => setTimeout(r, 11_000));
    const db1 = await dbCounters(c);
    const jobs = fixed.completed + fixed.failed + max.completed + max.failed;
    const per = (k: keyof DbCounters) => f((db1[k] - db0[k]) / Math.max(1, jobs), 2);
    process.stdout.write(
      `  PostgreSQL per job (its database, ${jobs} jobs): ${per('xact')} transactions, ${per('inserted')} rows inserted, ${per('updated')} updated, ${per('deleted')} deleted\n`,
    );
    return [fixed, max];
  } finally {
    await w.close();
    await c.close();
  }
}

/**
 * The baseline: the same messages parsed and analysed by the default workflow in-process, one
 * worker thread per core, without the platform around them (what every configuration is compared to).
 */
function analysisAloneOnCorpus() {
  const dir = corpusDir();
  if (!dir) throw new Error('the corpus is absent');
  return analysisAlone(dir, { workers: availableParallelism(), limit: LIMIT });
}

/**
 * Rspamd's msgs/s on the same messages: each POSTed to /checkv2 by CONCURRENCY loops (answers
 * read bounded); only 200 answers count. A reason instead when Rspamd cannot be started.
 */
async function rspamdAnchor(
  msgs: CorpusMessage[],
): Promise<{ msgsPerSec: number; cpuPerMsgMs: number; checked: number } | { skipped: string }> {
  const started = await startRspamd();
  if (!started.ok) return { skipped: `${started.why} (expected: ${RSPAMD_EXPECTED})` };
  const r = started.rspamd;
  try {
    const check = (raw: Buffer) =>
      fetchBounded(
        r.checkUrl,
        { method: 'POST', body: raw },
        { maxBytes: 256 * 1024, okOver: 'truncate', errorBytes: 4096, timeoutMs: 60_000 },
      ).then(
        (res) => res.status === 200,
        () => false,
      );
    for (const m of warmupOf(msgs, WARMUP)) await check(m.raw);
    const cpu0 = r.cpuSeconds();
    const t0 = performance.now();
    let next = 0;
    let checked = 0;
    await Promise.all(
      Array.from({ length: Math.min(CONCURRENCY, 16) }, async () => {
        while (next < msgs.length) {
          const m = msgs[next++] as CorpusMessage;
          if (await check(m.raw)) checked++;
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    return {
      msgsPerSec: checked / seconds,
      cpuPerMsgMs: ((r.cpuSeconds() - cpu0) * 1000) / Math.max(1, checked),
      checked,
    };
  } finally {
    await r.stop();
  }
}

async function main(): Promise<void> {
  const corpus = loadCorpus(LIMIT);
  if (!corpus) {
    process.stdout.write(
      'bench:e2e: the corpus (../shared/corpus) is absent; nothing to measure\n',
    );
    return;
  }
  // interleave phishing and ham so every slice has both
  const half = corpus.length / 2;
  const msgs: CorpusMessage[] = [];
  for (let i = 0; i < half; i++)
    msgs.push(corpus[i] as CorpusMessage, corpus[half + i] as CorpusMessage);
  const bytes = msgs.reduce((a, m) => a + m.raw.length, 0);
  process.stdout.write(
    `bench:e2e ${new Date().toISOString()} ${msgs.length} messages (${(bytes / 1e6).toFixed(1)} MB), offered rate ${RATE} msgs/s, closed loop ${CONCURRENCY} in flight, log level ${LOG_LEVEL}\n`,
  );
  const baseline = args.get('baseline') === 'false' ? undefined : await analysisAloneOnCorpus();
  if (baseline) {
    process.stdout.write(
      `baseline, analysis alone (parse + default workflow in-process, ${availableParallelism()} threads, no gateway/broker/store): msgs/s=${f(baseline.msgsPerSec, 1)} over ${baseline.messages} messages, ${f(baseline.cpuPerMsgMs, 2)} CPU ms/msg\n`,
    );
  }
  const rspamd = await rspamdAnchor(msgs);
  if ('skipped' in rspamd) process.stdout.write(`rspamd anchor skipped: ${rspamd.skipped}\n`);
  else {
    process.stdout.write(
      `anchor, rspamd /checkv2 (Debian rspamd 3.4, local rules only, same messages, same run): msgs/s=${f(rspamd.msgsPerSec, 1)} over ${rspamd.checked} messages, ${f(rspamd.cpuPerMsgMs, 2)} CPU ms/msg\n`,
    );
  }
  const results: PhaseResult[] = [];
  for (const config of CONFIGS) results.push(...(await runConfig(config, msgs)));
  const def = CONFIGS[0] as string;
  const max = results.find((r) => r.config === def && r.phase === 'as fast as accepted');
  const fixed = results.find((r) => r.config === def && r.phase !== 'as fast as accepted');
  process.stdout.write(
    `default configuration: ${def}; msgs/s as fast as accepted, latency at the offered ${RATE} msgs/s\n`,
  );
  for (const r of results.filter((x) => x.phase === 'as fast as accepted')) {
    const ratio = baseline ? `${f((r.msgsPerSec / baseline.msgsPerSec) * 100, 1)}% of` : 'no';
    const vsRspamd =
      'msgsPerSec' in rspamd ? `, ${f(r.msgsPerSec / rspamd.msgsPerSec, 2)}x rspamd` : '';
    process.stdout.write(
      `  ${r.config.padEnd(12)} ${f(r.msgsPerSec, 1)} completed msgs/s, ${ratio} the baseline (${f(baseline?.msgsPerSec ?? Number.NaN, 1)} msgs/s, same run)${vsRspamd}\n`,
    );
  }
  process.stdout.write(
    `msgs/s=${f(max?.msgsPerSec ?? Number.NaN, 1)} baseline_msgs/s=${f(baseline?.msgsPerSec ?? Number.NaN, 1)} p50_ms=${f(fixed?.latencyMs.p50 ?? Number.NaN)} p99_ms=${f(fixed?.latencyMs.p99 ?? Number.NaN)}\n`,
  );
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`bench:e2e failed: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  },
);

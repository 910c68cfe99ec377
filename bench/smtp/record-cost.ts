/**
 * The inline milter's recording cost (issue 29, ADR 024): `pnpm exec tsx bench/smtp/record-cost.ts`.
 *
 * TRAWL_MILTER_ANALYSIS=inline answers Postfix from its own analysis, then records the job in the
 * background (services/retriever-smtp/src/job-recorder.ts: the store's statements, the settlement's
 * event, campaign grouping). This bench measures that recording apart from the analysis, in CPU ms
 * per message of this process (the machine is shared: msgs/s would be the neighbours'):
 *   1. the inline analysis (startInlineAnalysis, the shipped configuration) of N messages of
 *      ../shared/corpus (the first N/2 of phishing/ and of ham/, alternated), its records captured
 *      instead of written: CPU per message of the analysis as the milter runs it (a second pass:
 *      the first one warms the code up and gives the warm-up's records);
 *   2. those records handed to a real record queue (startJobRecording) on the local PostgreSQL
 *      (`trawl_bench_record`, kept between runs: campaigns repeat as in real life) and RabbitMQ, at
 *      BENCH_RECORD_RATE records a second (as a milter receives them), after a warm-up of
 *      BENCH_RECORD_WARMUP records of the first pass: CPU per message from the first record to the
 *      last campaign grouped, and the statements it took;
 *   3. the baseline in the same run: the analysis alone (bench/analysis-alone.ts, `pnpm eval`'s
 *      runner, one thread) on the same messages.
 * PostgreSQL's and RabbitMQ's own CPU is not counted. Not a timed test: it prints numbers.
 *
 * BENCH_RECORD_MESSAGES (300), BENCH_RECORD_RATE (100; 0: all at once), BENCH_RECORD_WARMUP (40),
 * BENCH_RECORD_FRESH=1 (the database made again, empty), BENCH_RECORD_PGLITE=1 (PGlite, embedded
 * mode's store; empty at every run), BENCH_RECORD_PROFILE=<file> (a V8 CPU profile of step 2's
 * measured records, for `--cpu-prof`'s tools).
 */
import { createHash, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { cpus, loadavg } from 'node:os';
import { corpusDir, findRepoRoot, loadConfig } from '@trawl/config';
import { topology } from '@trawl/contracts';
import {
  createMemoryBroker,
  createStore,
  declareTopology,
  type SqlClient,
  type Store,
} from '@trawl/platform';
import { testBroker } from '@trawl/platform/testing';
import {
  type InlineAnalysisSettings,
  inlineAnalysisSettings,
  type JobRecord,
  silentLogger as silent,
  startInlineAnalysis,
  startJobRecording,
} from '@trawl/retriever-smtp/testing';
import { analysisAlone } from '../analysis-alone.ts';
import { openBenchDatabase } from '../bench-database.ts';
import { loadCorpus } from '../e2e/corpus.ts';

const N = Math.max(2, Number(process.env.BENCH_RECORD_MESSAGES ?? 300));
const RATE = Number(process.env.BENCH_RECORD_RATE ?? 100);
const WARMUP = Number(process.env.BENCH_RECORD_WARMUP ?? 40);
const FRESH = process.env.BENCH_RECORD_FRESH === '1';
const PGLITE = process.env.BENCH_RECORD_PGLITE === '1';
const PROFILE = process.env.BENCH_RECORD_PROFILE;
const DB = 'trawl_bench_record';

const cpuMs = (since: NodeJS.CpuUsage) => {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000;
};
const f = (n: number, d = 2) => n.toFixed(d);

/** The kind of a statement: its prepared name, else its first words. */
function kindOf(text: string, name: string | undefined): string {
  if (name !== undefined) return name.replace(/_\d+$/, '');
  return text.trim().split(/\s+/).slice(0, 3).join(' ').slice(0, 40);
}

/**
 * A SqlClient that counts the round trips it is given, by kind: its statements, and a
 * transaction's BEGIN and COMMIT.
 */
function counted(inner: SqlClient): { sql: SqlClient; statements: () => Map<string, number> } {
  const n = new Map<string, number>();
  const count = (kind: string, by = 1) => n.set(kind, (n.get(kind) ?? 0) + by);
  const counting = (c: SqlClient): SqlClient['query'] => {
    return (text, params, name) => {
      count(kindOf(text, name));
      return c.query(text, params, name);
    };
  };
  return {
    sql: {
      ...inner,
      kind: inner.kind,
      query: counting(inner),
      transaction: (fn) => {
        count('BEGIN, COMMIT', 2);
        return inner.transaction((tx) => fn({ ...tx, kind: tx.kind, query: counting(tx) }));
      },
    },
    statements: () => new Map(n),
  };
}

/** The counts of `now` minus those of `before`, per message, the largest first. */
function perMessage(now: Map<string, number>, before: Map<string, number>, messages: number) {
  const out: [string, number][] = [];
  for (const [k, v] of now) {
    const d = v - (before.get(k) ?? 0);
    if (d > 0) out.push([k, d / messages]);
  }
  return out.sort((a, b) => b[1] - a[1]);
}

/** The messages, phishing and ham alternated (the first N/2 of each, as analysisAlone reads them). */
function messages(): Buffer[] {
  const all = loadCorpus(Math.ceil(N / 2));
  if (!all) throw new Error('no corpus at ../shared/corpus');
  const phishing = all.filter((m) => m.label === 'phishing');
  const ham = all.filter((m) => m.label === 'ham');
  const out: Buffer[] = [];
  for (let i = 0; i < Math.max(phishing.length, ham.length); i++) {
    const p = phishing[i];
    const h = ham[i];
    if (p) out.push(p.raw);
    if (h) out.push(h.raw);
  }
  return out;
}

/**
 * Step 1: the inline analysis of every message, its records captured (no row written, no
 * grouping, its events on an in-process broker). Answers the records and the CPU per message.
 */
async function analyseInline(
  settings: InlineAnalysisSettings,
  store: Store,
  sql: SqlClient,
  raws: Buffer[],
): Promise<{ warm: JobRecord[]; records: JobRecord[]; cpuPerMsg: number }> {
  let records: JobRecord[] = [];
  const capture: Store = {
    ...store,
    jobs: {
      ...store.jobs,
      async createFinished(job, finish) {
        records.push({ job: job as JobRecord['job'], finish });
        const at = new Date().toISOString();
        return {
          job: {
            job_id: job.job_id,
            email_id: job.email_id,
            status: finish.outcome.status,
            workflow: job.workflow_id,
            created_at: at,
            started_at: at,
            completed_at: at,
          },
        };
      },
    },
  };
  // no campaigns repository: the capture groups nothing
  const { campaigns: _campaigns, ...withoutCampaigns } = capture;
  const broker = createMemoryBroker();
  const t = topology(`bench-capture-${randomUUID().slice(0, 8)}`);
  await declareTopology(broker, t);
  const inline = await startInlineAnalysis(
    { store: withoutCampaigns as Store, sql, broker, topology: t, logger: silent },
    settings,
  );
  const pass = async () => {
    let next = 0;
    const worker = async () => {
      while (next < raws.length) {
        const raw = raws[next++] as Buffer;
        await inline.analyse({
          raw,
          envelopeTo: [],
          origin: {
            retriever: 'bench',
            message_id: createHash('sha256').update(raw).digest('hex'),
          },
        });
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    await inline.recorder.settled();
  };
  await pass();
  const warm = records;
  records = [];
  const cpu0 = process.cpuUsage();
  await pass();
  const cpuPerMsg = cpuMs(cpu0) / raws.length;
  await inline.close();
  await broker.close();
  return { warm, records, cpuPerMsg };
}

/** Runs `fn` under V8's CPU profiler, written to `file` (no profiler without one). */
async function profiled<T>(file: string | undefined, fn: () => Promise<T>): Promise<T> {
  if (!file) return fn();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  }
}

/**
 * Step 2: the records written by a record queue of their own at `RATE` a second; answers the CPU
 * of this process from the first record to the last campaign grouped, and the statements.
 */
async function record(
  ports: Omit<Parameters<typeof startJobRecording>[0], 'log' | 'clock'>,
  records: JobRecord[],
  statements: () => Map<string, number>,
  o: Pick<InlineAnalysisSettings['record'], 'maxBatch' | 'lingerMs'>,
): Promise<{ cpuMs: number; wallMs: number; statements: [string, number][] }> {
  const recorder = startJobRecording(
    { ...ports, clock: () => new Date(), log: silent },
    {
      maxQueued: records.length + 1,
      maxBatch: o.maxBatch,
      lingerMs: o.lingerMs,
      backoff: { initialMs: 100, maxMs: 2000 },
    },
  );
  const s0 = statements();
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  for (const [i, r] of records.entries()) {
    if (RATE > 0) {
      const wait = t0 + (i * 1000) / RATE - performance.now();
      if (wait > 0) await new Promise((done) => setTimeout(done, wait));
    }
    recorder.reserve();
    recorder.record(r);
  }
  // writes what is queued, then waits for campaign grouping
  await recorder.close(120_000);
  return {
    cpuMs: cpuMs(cpu0),
    wallMs: performance.now() - t0,
    statements: perMessage(statements(), s0, records.length),
  };
}

async function main(): Promise<void> {
  const raws = messages();
  const db = await openBenchDatabase({
    name: DB,
    pglite: PGLITE,
    reuse: !FRESH,
    max: 8,
    applicationName: 'trawl-bench-record',
  });
  const c = counted(db);
  const store = createStore(c.sql);
  const held = await db.query<{ jobs: string; keys: string; campaigns: string }>(
    `SELECT (SELECT count(*) FROM jobs) AS jobs, (SELECT count(*) FROM lure_keys) AS keys,
       (SELECT count(*) FROM campaigns) AS campaigns`,
  );
  const tb = await testBroker();
  try {
    const settings = inlineAnalysisSettings(
      loadConfig({
        env: { APP_ENV: 'dev' },
        envFile: false,
        rootDir: findRepoRoot(),
        needs: { postgres: false, rabbitmq: false, redis: false, secretKey: false },
      }),
      { version: 'bench' },
    );
    const { warm, records, cpuPerMsg: inlineCpu } = await analyseInline(settings, store, db, raws);
    const ports = { store, broker: tb.broker, topology: tb.topology };
    await record(ports, warm.slice(0, WARMUP), c.statements, settings.record);
    const r = await profiled(PROFILE, () => record(ports, records, c.statements, settings.record));
    const alone = await analysisAlone(corpusDir() as string, {
      workers: 0,
      limit: Math.ceil(N / 2),
    });
    const grouped = await db.query<{ n: string }>(
      'SELECT count(*) AS n FROM campaign_members WHERE job_id = ANY($1::uuid[])',
      [records.map((x) => x.job.job_id)],
    );
    const recordCpu = r.cpuMs / records.length;
    const h = held.rows[0];
    console.log(
      `bench:record-cost ${new Date().toISOString()} store=${PGLITE ? 'pglite' : `postgres ${DB}`} ` +
        `held at start: ${h?.jobs} jobs, ${h?.keys} lure keys, ${h?.campaigns} campaigns; ` +
        `messages=${records.length} rate=${RATE}/s warm-up=${WARMUP} ` +
        `linger=${settings.record.lingerMs} ms cores=${cpus().length} ` +
        `load=${loadavg()
          .map((x) => x.toFixed(1))
          .join('/')}`,
    );
    console.log(
      `recording (store, event, campaign grouping): ${f(recordCpu)} CPU ms/msg, ` +
        `${f(r.statements.reduce((a, [, v]) => a + v, 0))} round trips/msg, ${grouped.rows[0]?.n} ` +
        `of the jobs in a campaign, ${f(r.wallMs / 1000, 1)} s`,
    );
    console.log(`  round trips/msg: ${r.statements.map(([k, v]) => `${k} ${f(v)}`).join(', ')}`);
    console.log(
      `inline analysis (records captured): ${f(inlineCpu)} CPU ms/msg; analysis alone ` +
        `(one thread, same messages): ${f(alone.cpuPerMsgMs)} CPU ms/msg (${alone.messages} messages)`,
    );
    console.log(
      `recording / analysis alone: ${f(recordCpu / alone.cpuPerMsgMs)}x; inline analysis + ` +
        `recording: ${f(inlineCpu + recordCpu)} ms/msg, ` +
        `${f((inlineCpu + recordCpu) / alone.cpuPerMsgMs)}x the analysis alone`,
    );
  } finally {
    await tb.cleanup();
    await db.close();
  }
}

await main();

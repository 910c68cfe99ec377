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

/** A SqlClient that counts the statements (and transactions) it is given. */
function counted(inner: SqlClient): { sql: SqlClient; statements: () => number } {
  let n = 0;
  return {
    sql: {
      ...inner,
      kind: inner.kind,
      query: (text, params, name) => {
        n++;
        return inner.query(text, params, name);
      },
      transaction: (fn) =>
        inner.transaction((tx) =>
          fn({
            ...tx,
            kind: tx.kind,
            query: (text, params, name) => {
              n++;
              return tx.query(text, params, name);
            },
          }),
        ),
    },
    statements: () => n,
  };
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
  const cfg = loadConfig({
    env: { APP_ENV: 'dev' },
    envFile: false,
    rootDir: findRepoRoot(),
    needs: { postgres: false, rabbitmq: false, redis: false, secretKey: false },
  });
  const broker = createMemoryBroker();
  const t = topology(`bench-capture-${randomUUID().slice(0, 8)}`);
  await declareTopology(broker, t);
  const inline = await startInlineAnalysis(
    { store: withoutCampaigns as Store, sql, broker, topology: t, logger: silent },
    inlineAnalysisSettings(cfg, { version: 'bench' }),
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
  statements: () => number,
): Promise<{ cpuMs: number; wallMs: number; statements: number }> {
  const recorder = startJobRecording(
    { ...ports, clock: () => new Date(), log: silent },
    { maxQueued: records.length + 1, maxBatch: 64, backoff: { initialMs: 100, maxMs: 2000 } },
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
    statements: statements() - s0,
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
    const { warm, records, cpuPerMsg: inlineCpu } = await analyseInline(store, db, raws);
    const ports = { store, broker: tb.broker, topology: tb.topology };
    await record(ports, warm.slice(0, WARMUP), c.statements);
    const r = await profiled(PROFILE, () => record(ports, records, c.statements));
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
        `messages=${records.length} rate=${RATE}/s warm-up=${WARMUP} cores=${cpus().length} ` +
        `load=${loadavg()
          .map((x) => x.toFixed(1))
          .join('/')}`,
    );
    console.log(
      `recording (store, event, campaign grouping): ${f(recordCpu)} CPU ms/msg, ` +
        `${f(r.statements / records.length, 2)} statements/msg, ${grouped.rows[0]?.n} of the jobs ` +
        `in a campaign, ${f(r.wallMs / 1000, 1)} s`,
    );
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

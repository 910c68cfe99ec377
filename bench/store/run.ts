/**
 * `pnpm bench:store`: the embedded store's job record (the inline milter's one statement a batch,
 * ADR 024) on PGlite, its statements named (prepared once, pglite-prepared.ts) against the same
 * statements unnamed (parsed, analysed and planned at every call, as PGlite's `query` does),
 * alternated batch by batch on one database in one run, so a noisy machine moves both alike.
 *
 * Each batch records BENCH_STORE_BATCH jobs (default 8) with 16 search terms and a sender each,
 * through `jobs.createFinished` in one event-loop turn (one statement). BENCH_STORE_WARMUP batches
 * of each side first (default 30: a running process has prepared and planned its statements),
 * then BENCH_STORE_BATCHES (default 150). Prints wall ms and CPU ms per job of each side and the
 * ratio. No server needed.
 */
import { cpus, loadavg } from 'node:os';
import { createMigratedPglite, createStore, type JobFinish, type SqlClient } from '@trawl/platform';
import { newJob, sampleResult, sampleTrace } from '@trawl/platform/testing';

const BATCH = Math.max(1, Number(process.env.BENCH_STORE_BATCH ?? 8));
const WARMUP = Math.max(0, Number(process.env.BENCH_STORE_WARMUP ?? 30));
const BATCHES = Math.max(1, Number(process.env.BENCH_STORE_BATCHES ?? 150));

/** The same client with every statement's name dropped: PGlite's plain `query`. */
function unnamed(sql: SqlClient): SqlClient {
  const wrap = (c: SqlClient): SqlClient => ({
    ...c,
    kind: c.kind,
    query: (text, params) => c.query(text, params),
    transaction: (fn) => c.transaction((tx) => fn(wrap(tx))),
  });
  return wrap(sql);
}

let n = 0;
function finishOf(job_id: string): JobFinish {
  const i = n++;
  const result = sampleResult(i % 2 === 0 ? 0.9 : 0.1);
  return {
    job_id,
    outcome: { status: 'completed', result, trace: sampleTrace },
    terms: [
      `sender:user${i % 97}@sender${i % 13}.example`,
      `sender_domain:sender${i % 13}.example`,
      `recipient:r${i % 31}@corp.example`,
      'recipient_domain:corp.example',
      ...Array.from({ length: 8 }, (_, k) => `subject:word${(i + k) % 50}`),
      `url_domain:link${i % 41}.example`,
      `url_domain:cdn${i % 7}.example`,
      'indicator:urgency_language',
      'indicator:suspicious_url',
    ],
    sender: {
      address: `user${i % 97}@sender${i % 13}.example`,
      at: new Date(),
      is_phishing: result.is_phishing,
    },
  };
}

const sql = await createMigratedPglite();
const sides = { named: createStore(sql), unnamed: createStore(unnamed(sql)) };
const totals = { named: { wall: 0, cpu: 0 }, unnamed: { wall: 0, cpu: 0 } };

async function batch(side: keyof typeof sides, measured: boolean): Promise<void> {
  const store = sides[side];
  const jobs = Array.from({ length: BATCH }, () =>
    newJob({ submitted_by: 'retriever:smtp', origin: { retriever: 'smtp', message_id: 'b' } }),
  );
  const t = performance.now();
  const c = process.cpuUsage();
  const answers = await Promise.all(
    jobs.map((j) => store.jobs.createFinished(j, finishOf(j.job_id))),
  );
  const cpu = process.cpuUsage(c);
  if (answers.some((a) => a === null)) throw new Error('a job was not recorded');
  if (!measured) return;
  totals[side].wall += performance.now() - t;
  totals[side].cpu += (cpu.user + cpu.system) / 1000;
}

try {
  for (let i = 0; i < WARMUP; i++) {
    await batch('named', false);
    await batch('unnamed', false);
  }
  for (let i = 0; i < BATCHES; i++) {
    // alternated, each first on every other round
    const order: (keyof typeof sides)[] = i % 2 === 0 ? ['named', 'unnamed'] : ['unnamed', 'named'];
    for (const side of order) await batch(side, true);
  }
  const jobs = BATCHES * BATCH;
  const f = (x: number) => (x / jobs).toFixed(3);
  console.log(
    `bench:store ${new Date().toISOString()} PGlite, job record (createFinished) batches of ${BATCH}, ${BATCHES} a side after ${WARMUP} warm-up, cores=${cpus().length} load=${loadavg()
      .map((l) => l.toFixed(1))
      .join('/')}`,
  );
  for (const side of ['unnamed', 'named'] as const) {
    console.log(
      `  ${side.padEnd(8)} ${f(totals[side].wall)} ms a job (wall), ${f(totals[side].cpu)} CPU ms a job`,
    );
  }
  console.log(
    `  named / unnamed: wall ${(totals.named.wall / totals.unnamed.wall).toFixed(2)}x, CPU ${(totals.named.cpu / totals.unnamed.cpu).toFixed(2)}x`,
  );
} finally {
  await sql.close();
}

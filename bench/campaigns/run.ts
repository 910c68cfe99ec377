/**
 * Campaign grouping benchmark (`pnpm bench:campaigns`, issue 16): what grouping adds to a finished
 * job, measured on the corpus. Every message of `../shared/corpus` is parsed, its evidence built and
 * its job stored finished (phishing verdict for phishing/, clean for ham/) in a database of its own
 * (`trawl_bench_campaigns` on the test PostgreSQL server, or PGlite with --pglite); then, as the
 * orchestrator does for a suspicious job:
 *   1. lure keys (`lureOf`): CPU per message;
 *   2. `campaigns.assign`: one at a time (latency) over the first half of the messages, and then
 *      over the second half with 16 in flight (the orchestrator's prefetch), or with --batch=N by
 *      `assignMany` N at a time, one batch after the other (the orchestrator's background grouping
 *      under load; --batch=1: `assign` one at a time), against a lure_keys table pre-filled with
 *      --background synthetic jobs. --copies=2 stores every message twice (as bench:e2e submits
 *      the corpus once per phase): the second half is then the copies, each joining a campaign;
 * and it prints the campaigns formed. Not a timed test: it prints numbers.
 *
 *   pnpm bench:campaigns [--background 200000] [--pglite] [--all] [--batch 64] [--copies 2]
 *   (--all: ham grouped too)
 */
import { createHash, randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { cliOptions } from '@trawl/config';
import type { AnalysisResult, Email } from '@trawl/contracts';
import { buildEvidence, isSuspicious, type Lure, lureOf } from '@trawl/investigation';
import { parseRawEmail } from '@trawl/mail';
import { createPgClient, createStore, type SqlClient } from '@trawl/platform';
import { testUrls } from '@trawl/platform/testing';
import { openBenchDatabase } from '../bench-database.ts';
import { loadCorpus } from '../e2e/corpus.ts';

const { values: args } = parseArgs({
  options: cliOptions(['background', 'batch', 'copies'], ['pglite', 'all']),
});
const PGLITE = !!args.pglite;
const BACKGROUND = Number(args.background ?? (PGLITE ? 20_000 : 200_000));
const BATCH = args.batch === undefined ? 0 : Math.max(1, Number(args.batch));
const COPIES = Math.max(1, Number(args.copies ?? 1));
const DB = 'trawl_bench_campaigns';

function openDatabase(): Promise<SqlClient> {
  return openBenchDatabase({
    name: DB,
    pglite: PGLITE,
    max: 8,
    applicationName: 'trawl-bench-campaigns',
  });
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
}

const r2 = (n: number) => Math.round(n * 100) / 100;

/** Time spent per statement (by prepared name, else the statement's first words). */
const spent = new Map<string, number[]>();
function timed(inner: SqlClient): SqlClient {
  return {
    ...inner,
    kind: inner.kind,
    async query(text, params, name) {
      const s = performance.now();
      try {
        return await inner.query(text, params, name);
      } finally {
        const k = name ?? text.trim().slice(0, 40).replace(/\s+/g, ' ');
        const l = spent.get(k) ?? [];
        l.push(performance.now() - s);
        spent.set(k, l);
      }
    },
    transaction: (fn) => inner.transaction((tx) => fn(timed(tx))),
  };
}

/** Statements of assign (see the listing below): their count and summed time so far. */
function assignStatements(): { n: number; ms: number } {
  let n = 0;
  let ms = 0;
  for (const [k, l] of spent) {
    if (!isAssignStatement(k)) continue;
    n += l.length;
    for (const x of l) ms += x;
  }
  return { n, ms };
}

function isAssignStatement(k: string): boolean {
  return (
    k.startsWith('campaign_') ||
    // a lookup of several jobs' keys is unnamed (planned for its rows)
    k.startsWith('WITH k AS') ||
    k.startsWith('UPDATE campaign') ||
    k.startsWith('INSERT INTO job_terms') ||
    k.startsWith('DELETE FROM job_terms') ||
    k.startsWith('DELETE FROM campaigns') ||
    k.startsWith('INSERT INTO campaign_') ||
    k === 'BEGIN' ||
    k === 'COMMIT'
  );
}

async function main(): Promise<void> {
  const corpus = loadCorpus();
  if (!corpus) throw new Error('no corpus at ../shared/corpus');
  const sql = await openDatabase();
  const store = createStore(timed(sql));

  // background: lure keys of synthetic earlier jobs (domains and text bands nobody else holds)
  for (let done = 0; done < BACKGROUND; done += 10_000) {
    const n = Math.min(10_000, BACKGROUND - done);
    await sql.query(
      `INSERT INTO lure_keys (key, job_id, signature)
       SELECT k.key, g.id, NULL FROM (SELECT gen_random_uuid() AS id, i FROM generate_series(1, $1) i) g,
       LATERAL (VALUES ('dom:bg' || (g.i + $2) || '.example'), ('txt0:' || md5(g.i::text || $2))) k(key)`,
      [n, done],
    );
  }

  type Item = { id: string; email: Email; result: AnalysisResult; label: string };
  const items: Item[] = [];
  for (const m of Array.from({ length: COPIES }, () => corpus).flat()) {
    let email: Email;
    try {
      email = await parseRawEmail(m.raw);
    } catch {
      continue;
    }
    const phishing = m.label === 'phishing';
    const result: AnalysisResult = {
      is_phishing: phishing,
      threat_level: phishing ? 'high' : 'none',
      confidence: 0.9,
      summary: '',
      recommended_action: phishing ? 'quarantine' : 'allow',
      indicators: [],
      evidence: buildEvidence(email),
    };
    const id = randomUUID();
    await store.jobs.create({ job_id: id, email_id: id, workflow_id: 'default', email });
    await store.jobs.finish({
      job_id: id,
      outcome: {
        status: 'completed',
        result,
        trace: { workflow_id: 'default', duration_ms: 1, stages: [] },
      },
    });
    items.push({ id, email, result, label: m.label });
  }
  const grouped = items.filter((i) => args.all || isSuspicious(i.result));

  // 1. lure keys: CPU per message (three passes, the last one timed)
  let lures = grouped.map((i) => lureOf(i.email, i.result.evidence as never));
  for (let k = 0; k < 2; k++)
    lures = grouped.map((i) => lureOf(i.email, i.result.evidence as never));
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  lures = grouped.map((i) => lureOf(i.email, i.result.evidence as never));
  const lureWall = performance.now() - t0;
  const lureCpu = process.cpuUsage(c0);
  const keys = lures.reduce((a, l) => a + l.keys.length, 0);

  // 2a. assign one at a time: the first half of the messages
  const half = Math.floor(grouped.length / 2);
  const lat: number[] = [];
  const st0 = assignStatements();
  const t1 = performance.now();
  for (let i = 0; i < half; i++) {
    const s = performance.now();
    await store.campaigns.assign({ job_id: (grouped[i] as Item).id, ...(lures[i] as Lure) });
    lat.push(performance.now() - s);
  }
  const seqWall = performance.now() - t1;
  const st1 = assignStatements();
  // 2b. the second half with 16 in flight, or by batches of BATCH
  const t2 = performance.now();
  let next = half;
  const lat16: number[] = [];
  if (BATCH > 0) {
    for (let i = half; i < grouped.length; i += BATCH) {
      const s = performance.now();
      const end = Math.min(grouped.length, i + BATCH);
      if (BATCH === 1) {
        await store.campaigns.assign({ job_id: (grouped[i] as Item).id, ...(lures[i] as Lure) });
        lat16.push(performance.now() - s);
        continue;
      }
      await store.campaigns.assignMany(
        grouped.slice(i, end).map((g, k) => ({ job_id: g.id, ...(lures[i + k] as Lure) })),
      );
      const ms = performance.now() - s;
      for (let k = i; k < end; k++) lat16.push(ms);
    }
    next = grouped.length;
  }
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (;;) {
        const i = next++;
        if (i >= grouped.length) return;
        const s = performance.now();
        await store.campaigns.assign({ job_id: (grouped[i] as Item).id, ...(lures[i] as Lure) });
        lat16.push(performance.now() - s);
      }
    }),
  );
  const parWall = performance.now() - t2;
  const st2 = assignStatements();
  const perJob = (a: { n: number; ms: number }, b: { n: number; ms: number }, jobs: number) =>
    `statements ${r2((b.n - a.n) / jobs)} a job, ${r2((b.ms - a.ms) / jobs)} ms a job`;

  const list = await store.campaigns.list({ limit: 200 });
  const members = list.items.reduce((a, c) => a + c.size, 0);
  const byLabel = { phishing: 0, ham: 0 };
  // the grouping itself, whatever the campaigns' ids: the sets of messages grouped together
  const together = new Map<string, number[]>();
  for (const [n, i] of grouped.entries()) {
    const c = await store.campaigns.forJob(i.id);
    if (!c) continue;
    byLabel[i.label as 'phishing' | 'ham']++;
    together.set(c.id, [...(together.get(c.id) ?? []), n]);
  }
  const partition = createHash('sha256')
    .update(JSON.stringify([...together.values()].map((l) => l.join(',')).sort()))
    .digest('hex')
    .slice(0, 12);
  console.log('statements of assign (ms: count, p50, p99):');
  for (const [k, l] of spent) {
    if (!isAssignStatement(k)) continue;
    console.log(
      `  ${k.padEnd(42)} ${String(l.length).padStart(5)} ${r2(pct(l, 50))} ${r2(pct(l, 99))}`,
    );
  }
  const top = [...list.items].sort((a, b) => b.size - a.size).slice(0, 8);

  console.log(
    `store: ${PGLITE ? 'PGlite' : 'PostgreSQL'}; background lure keys: ${BACKGROUND * 2}`,
  );
  console.log(
    `messages: ${items.length} stored, ${grouped.length} grouped (suspicious${args.all ? ' + ham' : ''})`,
  );
  console.log(
    `lure keys: ${keys} (${r2(keys / grouped.length)} a message); ${r2(lureWall / grouped.length)} ms wall, ` +
      `${r2((lureCpu.user + lureCpu.system) / 1000 / grouped.length)} CPU ms a message`,
  );
  console.log(
    `assign, one at a time: ${half} in ${Math.round(seqWall)} ms; p50 ${r2(pct(lat, 50))} ms, p99 ${r2(pct(lat, 99))} ms; ${perJob(st0, st1, half)}`,
  );
  console.log(
    `assign, ${BATCH > 1 ? `batches of ${BATCH}` : BATCH === 1 ? 'one at a time' : '16 in flight'}: ${grouped.length - half} in ${Math.round(parWall)} ms (${Math.round(((grouped.length - half) / parWall) * 1000)}/s); p50 ${r2(pct(lat16, 50))} ms, p99 ${r2(pct(lat16, 99))} ms; ${perJob(st1, st2, grouped.length - half)}`,
  );
  console.log(
    `campaigns: ${list.items.length}${list.next_cursor ? '+' : ''}, ${members} members (phishing ${byLabel.phishing}, ham ${byLabel.ham}); grouping ${partition} (${together.size} campaigns); largest:`,
  );
  for (const c of top) {
    console.log(
      `  ${String(c.size).padStart(4)} msgs ${String(c.recipients).padStart(4)} rcpts  [${c.lures.join(',')}]  ${c.subject.slice(0, 60)}`,
    );
  }
  await sql.close();
  if (!PGLITE) {
    const admin = createPgClient({ url: testUrls().databaseUrl, max: 1 });
    await admin.exec(`DROP DATABASE IF EXISTS ${DB}`);
    await admin.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

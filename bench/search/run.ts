/**
 * Job search benchmark (`pnpm bench:search`, issue 16): loads N finished jobs with their search
 * terms into a database of its own (`trawl_bench_search` on the test PostgreSQL server; dropped and
 * made again unless --reuse), then runs each filter of GET /api/v1/analyze through the store's own
 * `jobs.list` (the gateway's query, first page of 50 and a page deep in the results) and prints
 * p50 / p99 next to a baseline measured in the same run: `jobs.get` of one job by primary key.
 *
 *   pnpm bench:search                 # 1,000,000 jobs on PostgreSQL
 *   pnpm bench:search --jobs 100000   # fewer jobs
 *   pnpm bench:search --reuse         # keep the database of the last run (no load)
 *   pnpm bench:search --pglite --jobs 20000   # the embedded store
 *
 * Data: senders from 20,000 domains (a few very common), 2,000 recipients of one organisation,
 * subjects of three words of a 300-word vocabulary, 1–2 URLs of 20,000 domains, an attachment on
 * one job in ten, 0–3 indicator types, 30 % phishing, three workflows (90 / 9 / 1 %), twenty
 * submitters, one job every 30 s back in time. Each job carries what the list shows (subject,
 * sender, display name, a recipient; issue 32), so a page reads them as the API does. Not a timed
 * test: it prints numbers.
 */
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import { cliOptions } from '@trawl/config';
import type { JobSearchFilters } from '@trawl/contracts';
import { createStore, type SqlClient } from '@trawl/platform';
import { openBenchDatabase } from '../bench-database.ts';

const { values: args } = parseArgs({
  options: cliOptions(['jobs', 'runs', 'database'], ['reuse', 'pglite']),
});
const PGLITE = !!args.pglite;
const N = Number(args.jobs ?? (PGLITE ? 20_000 : 1_000_000));
const RUNS = Number(args.runs ?? 40);
const DB = args.database ?? 'trawl_bench_search';
if (!Number.isInteger(N) || N < 1000) throw new Error('--jobs must be an integer ≥ 1000');

const CHUNK = 100_000;

function openDatabase(): Promise<SqlClient> {
  return openBenchDatabase({
    name: DB,
    pglite: PGLITE,
    reuse: !!args.reuse,
    max: 4,
    applicationName: 'trawl-bench-search',
  });
}

/**
 * Jobs from..to (1-based numbers i): each row and its terms made by SQL from i, so that loading a
 * million takes a minute, not an hour. The formulas are the data description above.
 */
async function loadChunk(sql: SqlClient, from: number, to: number): Promise<void> {
  await sql.query(
    `INSERT INTO jobs (job_id, email_id, workflow_id, status, email, result, trace, submitted_by,
       created_at, started_at, completed_at, subject, sender, sender_name, recipients,
       recipient_count)
     SELECT md5('job' || i)::uuid, 'em_' || i,
       CASE WHEN i % 100 = 0 THEN 'rare' WHEN i % 10 = 0 THEN 'deep' ELSE 'default' END,
       'completed', '{}',
       jsonb_build_object('is_phishing', i % 10 < 3, 'threat_level',
         CASE WHEN i % 10 < 3 THEN (ARRAY['medium','high','critical'])[1 + i % 3] ELSE 'none' END,
         'confidence', 0.9, 'summary', 'bench',
         'recommended_action', CASE WHEN i % 10 < 3 THEN 'quarantine' ELSE 'allow' END,
         -- the indicators of the terms below (the list's top indicator is read from them)
         'indicators', (SELECT COALESCE(jsonb_agg(jsonb_build_object('type', t, 'value', 'bench',
             'confidence', c)), '[]'::jsonb)
           FROM (VALUES
             (CASE WHEN i % 4 > 0 THEN 'type' || (i % 37) END, 0.6),
             (CASE WHEN i % 4 > 1 THEN 'type' || (i * 3 % 37) END, 0.7),
             (CASE WHEN i % 4 > 2 THEN 'type' || (i * 7 % 37) END, 0.8)) AS ind(t, c)
           WHERE t IS NOT NULL)),
       '{"workflow_id":"default","duration_ms":5,"stages":[]}'::jsonb,
       'user' || (i % 20),
       t, t, t,
       -- what the list shows (issue 32): the same subject words, sender and recipient as the terms
       'w' || (i % 300) || ' w' || (i * 13 % 300) || ' w' || (i * 17 % 300),
       's' || (i % 50000) || '@' || dom, 'Sender ' || (i % 50000),
       jsonb_build_array('u' || (i * 31 % 2000) || '@corp.example'), 1
     FROM generate_series($1::int, $2::int) AS i,
       LATERAL (SELECT now() - make_interval(secs => i * 30) AS t) x,
       LATERAL (SELECT CASE WHEN i % 4 = 0 THEN 'd' || (i % 5)
         ELSE 'd' || (i::bigint * 7919 % 20000) END || '.example' AS dom) d`,
    [from, to],
  );
  await sql.query(
    `INSERT INTO job_terms (kind, value, created_at, job_id)
     SELECT DISTINCT k, v, j.created_at, j.job_id
     FROM generate_series($1::bigint, $2::bigint) AS g(i)
       JOIN jobs j ON j.job_id = md5('job' || g.i)::uuid,
       LATERAL (SELECT g.i AS i) n,
       LATERAL (SELECT
         -- a few very common sender domains, a long tail
         CASE WHEN n.i % 4 = 0 THEN 'd' || (n.i % 5) ELSE 'd' || (n.i * 7919 % 20000) END
           || '.example' AS dom) d,
       LATERAL (VALUES
         ('from', 's' || (n.i % 50000) || '@' || d.dom),
         ('from_dom', d.dom),
         ('rcpt', 'u' || (n.i * 31 % 2000) || '@corp.example'),
         ('rcpt_dom', 'corp.example'),
         ('subj', 'w' || (n.i % 300)),
         ('subj', 'w' || (n.i * 13 % 300)),
         ('subj', 'w' || (n.i * 17 % 300)),
         ('url', 'l' || (n.i * 104729 % 20000) || '.example'),
         ('url', CASE WHEN n.i % 2 = 0 THEN 'l' || (n.i * 15485863 % 20000) || '.example' END),
         ('sha', CASE WHEN n.i % 10 = 7 THEN md5('att' || (n.i % 50000)) || md5('x' || (n.i % 50000)) END),
         ('ind', CASE WHEN n.i % 4 > 0 THEN 'type' || (n.i % 37) END),
         ('ind', CASE WHEN n.i % 4 > 1 THEN 'type' || (n.i * 3 % 37) END),
         ('ind', CASE WHEN n.i % 4 > 2 THEN 'type' || (n.i * 7 % 37) END)
         -- verdict, threat, action, workflow and submitter are searched in the row (migration 015)
       ) AS t(k, v)
     WHERE v IS NOT NULL`,
    [from, to],
  );
}

async function load(sql: SqlClient): Promise<void> {
  const have = Number(
    (await sql.query<{ n: string }>('SELECT count(*) AS n FROM jobs')).rows[0]?.n ?? 0,
  );
  if (have >= N) {
    console.log(`reusing ${have} jobs in ${DB}`);
    return;
  }
  const t0 = performance.now();
  // Loaded without the terms' key, which is built once afterwards (faster than row by row).
  await sql.exec('ALTER TABLE job_terms DROP CONSTRAINT IF EXISTS job_terms_pkey');
  for (let from = have + 1; from <= N; from += CHUNK) {
    const to = Math.min(N, from + CHUNK - 1);
    await loadChunk(sql, from, to);
    process.stdout.write(
      `\rloaded ${to} / ${N} jobs (${((performance.now() - t0) / 1000).toFixed(0)} s)`,
    );
  }
  await sql.exec('ALTER TABLE job_terms ADD PRIMARY KEY (kind, value, created_at, job_id)');
  await sql.exec('VACUUM ANALYZE jobs');
  await sql.exec('VACUUM ANALYZE job_terms');
  const terms = (await sql.query<{ n: string }>('SELECT count(*) AS n FROM job_terms')).rows[0]?.n;
  console.log(
    `\nloaded ${N} jobs, ${terms} terms in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
  );
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;
}

interface Case {
  name: string;
  /** The filters of run r (values vary between runs so that caches do not answer every run). */
  filters: (r: number) => JobSearchFilters;
}

const at = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString();

const CASES: Case[] = [
  { name: 'no filter (newest first)', filters: () => ({}) },
  { name: 'status=completed', filters: () => ({ status: 'completed' }) },
  { name: 'is_phishing=true (30 %)', filters: () => ({ terms: ['phish:true'] }) },
  { name: 'threat_level=critical (10 %)', filters: () => ({ terms: ['threat:critical'] }) },
  { name: 'action=quarantine', filters: () => ({ terms: ['action:quarantine'] }) },
  {
    name: 'sender=address (~20 jobs)',
    filters: (r) => ({
      terms: [`from:s${(r * 4 + 1) % 50000}@d${((r * 4 + 1) * 7919) % 20000}.example`],
    }),
  },
  {
    name: 'sender=domain, common (5 %)',
    filters: (r) => ({ terms: [`from_dom:d${r % 5}.example`] }),
  },
  {
    name: 'sender=domain, rare (~40 jobs)',
    filters: (r) => ({ terms: [`from_dom:d${((r * 4 + 1) * 7919) % 20000}.example`] }),
  },
  {
    name: 'recipient=address (~500 jobs)',
    filters: (r) => ({ terms: [`rcpt:u${r % 2000}@corp.example`] }),
  },
  { name: 'recipient=domain (all)', filters: () => ({ terms: ['rcpt_dom:corp.example'] }) },
  { name: 'subject=one word (1 %)', filters: (r) => ({ terms: [`subj:w${r % 300}`] }) },
  {
    name: 'subject=two words',
    filters: (r) => ({ terms: [`subj:w${r % 300}`, `subj:w${(r * 13) % 300}`] }),
  },
  { name: 'url_domain (~75 jobs)', filters: (r) => ({ terms: [`url:l${r % 20000}.example`] }) },
  {
    name: 'sha256 (~2 jobs)',
    filters: (r) => ({
      terms: [`sha:${md5hex(`att${(r * 10 + 7) % 50000}`)}${md5hex(`x${(r * 10 + 7) % 50000}`)}`],
    }),
  },
  { name: 'indicator type', filters: (r) => ({ terms: [`ind:type${r % 37}`] }) },
  { name: 'workflow=rare (1 %)', filters: () => ({ terms: ['wf:rare'] }) },
  { name: 'submitter', filters: (r) => ({ terms: [`by:user${r % 20}`] }) },
  { name: 'since/until (one day, a month ago)', filters: () => ({ since: at(31), until: at(30) }) },
  { name: 'email_id', filters: (r) => ({ email_id: `em_${1 + ((r * 7777) % N)}` }) },
  {
    name: 'phishing + sender domain + since',
    filters: (r) => ({ terms: [`from_dom:d${r % 5}.example`, 'phish:true'], since: at(60) }),
  },
  {
    name: 'indicator + subject word + workflow=deep',
    filters: (r) => ({ terms: [`ind:type${r % 37}`, `subj:w${r % 300}`, 'wf:deep'] }),
  },
  {
    name: 'critical + workflow=deep (row kinds only)',
    filters: () => ({ terms: ['threat:critical', 'wf:deep'] }),
  },
  {
    name: 'submitter + not phishing (row kinds only)',
    filters: (r) => ({ terms: [`by:user${r % 20}`, 'phish:false'] }),
  },
  {
    name: 'rare combination: critical + url domain',
    filters: (r) => ({ terms: [`url:l${r % 20000}.example`, 'threat:critical'] }),
  },
];

function md5hex(s: string): string {
  return createHash('md5').update(s).digest('hex');
}

async function main(): Promise<void> {
  const sql = await openDatabase();
  try {
    await load(sql);
    const store = createStore(sql);
    const row = (n: number) =>
      `${md5hex(`job${n}`).replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5')}`;
    // warm up the connection pool and the catalog caches
    for (let i = 0; i < 5; i++) {
      await store.jobs.get(row(i + 1));
      await store.jobs.list({ limit: 50 });
    }
    const measure = async (fn: (r: number) => Promise<unknown>): Promise<number[]> => {
      const ms: number[] = [];
      for (let r = 0; r < RUNS; r++) {
        const t = performance.now();
        await fn(r);
        ms.push(performance.now() - t);
      }
      return ms.sort((a, b) => a - b);
    };
    const base = await measure((r) => store.jobs.get(row(1 + ((r * 104729) % N))));
    const kind = PGLITE ? 'PGlite' : 'PostgreSQL';
    console.log(`\n${kind}, ${N} jobs, ${RUNS} runs per line; page = 50 jobs\n`);
    const head = `${'filter'.padEnd(44)} ${'rows'.padStart(5)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'deep p50'.padStart(9)} ${'deep p99'.padStart(9)}`;
    console.log(head);
    console.log('-'.repeat(head.length));
    const fmt = (n: number) => n.toFixed(2).padStart(8);
    console.log(
      `${'baseline: jobs.get by primary key'.padEnd(44)} ${'1'.padStart(5)} ${fmt(pct(base, 50))} ${fmt(pct(base, 99))}`,
    );
    let worst = 0;
    for (const c of CASES) {
      let rows = 0;
      const cursors: (string | null)[] = [];
      const first = await measure(async (r) => {
        const page = await store.jobs.list({ limit: 50, filters: c.filters(r) });
        rows = Math.max(rows, page.items.length);
        cursors[r] = page.next_cursor;
      });
      // a page deep in the results: the fifth page (four cursors followed), when there is one
      const deepCursors: (string | null)[] = [];
      for (let r = 0; r < RUNS; r++) {
        let cur = cursors[r] ?? null;
        for (let k = 0; k < 3 && cur; k++) {
          cur = (await store.jobs.list({ limit: 50, filters: c.filters(r), cursor: cur }))
            .next_cursor;
        }
        deepCursors[r] = cur;
      }
      const withDeep = deepCursors.some((x) => x);
      const deep = withDeep
        ? await measure(async (r) => {
            const cur = deepCursors[r];
            if (cur) await store.jobs.list({ limit: 50, filters: c.filters(r), cursor: cur });
          })
        : [];
      worst = Math.max(worst, pct(first, 99), withDeep ? pct(deep, 99) : 0);
      console.log(
        `${c.name.padEnd(44)} ${String(rows).padStart(5)} ${fmt(pct(first, 50))} ${fmt(pct(first, 99))} ${withDeep ? fmt(pct(deep, 50)).padStart(9) : '        -'} ${withDeep ? fmt(pct(deep, 99)).padStart(9) : '        -'}`,
      );
    }
    console.log(`\nworst p99: ${worst.toFixed(1)} ms (target < 200 ms over a million jobs)`);
  } finally {
    await sql.close();
  }
}

await main();

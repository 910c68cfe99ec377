/**
 * Trawl for `pnpm bench:profile`, in a process of its own so that its CPU is Trawl's alone: the
 * SMTP filter (services/retriever-smtp, after-queue) in front of Trawl in the shape asked for
 * (`scale-out`: the gateway, analyzer orchestrator and mail orchestrator on the local PostgreSQL,
 * Redis and RabbitMQ, as bench:smtp runs them; `embedded`: the all-in-one start on PGlite, the
 * in-process broker and cache). The inline milter (`milter-inline`) in scale-out shape is the
 * milter alone on the database and broker, as deployed. Driven over IPC (bench/profile/child.ts)
 * by bench/profile/run.ts and bench/smtp/run.ts: `start` starts V8's sampling profiler (unless
 * told not to) and the CPU counters, `stop` answers the profile's stages and the counters.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { startEmbedded } from '@trawl/all-in-one';
import { findRepoRoot, loadConfig } from '@trawl/config';
import { deriveCredential } from '@trawl/contracts';
import type { SqlClient } from '@trawl/platform';
import { testBroker, testSchema } from '@trawl/platform/testing';
import { createSmtpFilter, SmtpSettings } from '@trawl/retriever-smtp';
import {
  PLATFORM_KEY,
  silentLogger,
  type startInlineMilter,
  startTrawlStack,
} from '@trawl/retriever-smtp/testing';
import { benchInlineMilter } from '../support/inline-milter.ts';
import { type Attribution, attribute } from './stages.ts';

export interface TrawlProcessArgs {
  shape: 'scale-out' | 'embedded';
  /**
   * `filter`: the after-queue content filter pushing to the mail orchestrator; `milter-inline`: the
   * milter analysing in this process and recording the jobs afterwards (ADR 024), on `filterPort`.
   */
  path: 'filter' | 'milter-inline';
  mailPort: number;
  httpPort: number;
  filterPort: number;
  returnPort: number;
  dataDir: string;
}

/**
 * `start` opens the measured window (`profile: false`: the CPU counters only, no V8 profiler: the
 * figures of a run that is not a profile, bench:smtp's); `stop` closes it.
 */
export type ToChild = { type: 'start'; profile?: boolean } | { type: 'stop' } | { type: 'close' };

export interface StopAnswer {
  type: 'stopped';
  /** This process's CPU (every thread but the profiler's) over the window, ms. */
  processCpuMs: number;
  /** The profiler's own thread over the window, ms (not counted above). */
  profilerMs: number;
  /** The main thread's CPU over the window, ms (/proc): the profile's samples are scaled to it. */
  mainCpuMs: number;
  /** CPU ms per stage (the main thread's CPU shared out by the profile's samples). */
  stages: [string, number][];
  /** CPU ms in @trawl/mail's MIME parser, by the stage that called it. */
  parse: [string, number][];
  /** The leaves charged to no stage, most first, CPU ms. */
  unplaced: [string, number][];
  /** CPU ms of the other threads over the window, by kind. */
  threads: [string, number][];
  /** Rows written to each table of its schema over the window (scale-out), and PostgreSQL pids. */
  rows?: Record<string, { ins: number; upd: number; del: number }>;
}

export type FromChild =
  | { type: 'ready'; pgPids: number[] }
  | StopAnswer
  | { type: 'pg-pids'; pgPids: number[] };

const args = JSON.parse(process.argv[2] ?? '{}') as TrawlProcessArgs;
const send = (m: FromChild) => process.send?.(m);
const closers: (() => Promise<unknown>)[] = [];
let sql: SqlClient | undefined;
let schema = '';
/** Resolves once every message taken so far is done (the inline milter: its jobs recorded). */
let settled: () => Promise<void> = async () => undefined;

async function start(): Promise<void> {
  let analysis: Parameters<typeof startInlineMilter>[0]['analysis'];
  if (args.shape === 'embedded') {
    const cfg = loadConfig({
      env: {
        APP_ENV: 'dev',
        TRAWL_DATA_DIR: args.dataDir,
        TRAWL_ADMIN_USER: 'admin',
        TRAWL_ADMIN_PASSWORD: 'Correct-Horse-Battery-9',
        INTERNAL_API_KEY: PLATFORM_KEY,
        TRAWL_MAIL_ORCHESTRATOR_PORT: String(args.mailPort),
        TRAWL_MAIL_RETRIEVERS: JSON.stringify({
          smtp: { url: `http://127.0.0.1:${args.httpPort}` },
        }),
      },
      envFile: false,
      rootDir: findRepoRoot(),
      needs: { postgres: false, rabbitmq: false, redis: false, secretKey: true },
    });
    const trawl = await startEmbedded(cfg, { port: 0, host: '127.0.0.1', logger: silentLogger });
    closers.push(() => trawl.close());
    analysis = trawl.ports;
  } else if (args.path === 'milter-inline') {
    // The milter analysing inline is a process of its own beside Postfix (ADR 024), given the
    // database and broker: no gateway or orchestrator in it, as retriever-smtp's main starts it.
    const db = await testSchema({ max: 12 });
    closers.push(() => db.drop());
    const tb = await testBroker();
    closers.push(() => tb.cleanup());
    analysis = { sql: db.sql, store: db.store, broker: tb.broker, topology: tb.topology };
    sql = db.sql;
    schema = (await sql.query<{ s: string }>('SELECT current_schema() AS s')).rows[0]?.s ?? '';
  } else {
    const trawl = await startTrawlStack({
      mailPort: args.mailPort,
      filters: { smtp: args.httpPort },
    });
    closers.push(() => trawl.close());
    analysis = trawl.analysisPorts;
    sql = trawl.store.sql;
    schema = (await sql.query<{ s: string }>('SELECT current_schema() AS s')).rows[0]?.s ?? '';
  }
  if (args.path === 'milter-inline') {
    const inline = await benchInlineMilter({
      analysis,
      milterPort: args.filterPort,
      httpPort: args.httpPort,
    });
    closers.push(() => inline.milter.close());
    settled = inline.settled;
    return;
  }
  const filter = createSmtpFilter(
    SmtpSettings.parse({
      mail_orchestrator_url: `http://127.0.0.1:${args.mailPort}`,
      return_port: args.returnPort,
      policy: 'none=deliver,low=deliver,medium=deliver,high=deliver,critical=deliver',
      unanalyzed_action: 'deliver',
      deadline_ms: 60_000,
    }),
    {
      logger: silentLogger,
      credential: deriveCredential(PLATFORM_KEY, { kind: 'retriever', id: 'smtp' }),
      smtpPort: args.filterPort,
    },
  );
  await filter.app.listen({ host: '127.0.0.1', port: args.httpPort });
  await filter.start();
  closers.push(() => filter.stop());
}

/** PostgreSQL backends of this process's pool (their CPU is read by the parent from /proc). */
async function pgPids(): Promise<number[]> {
  if (!sql) return [];
  const r = await sql.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
    [`trawl-test-${schema}`],
  );
  return r.rows.map((x) => Number(x.pid));
}

type Counts = Record<string, { ins: number; upd: number; del: number }>;
async function tableCounts(): Promise<Counts | undefined> {
  if (!sql) return undefined;
  // the statistics of this backend's transactions reach the views at their next flush
  await new Promise((r) => setTimeout(r, 1500));
  const r = await sql.query<{ relname: string; ins: string; upd: string; del: string }>(
    `SELECT relname, n_tup_ins AS ins, n_tup_upd AS upd, n_tup_del AS del
       FROM pg_stat_user_tables WHERE schemaname = $1`,
    [schema],
  );
  const out: Counts = {};
  for (const x of r.rows) out[x.relname] = { ins: +x.ins, upd: +x.upd, del: +x.del };
  return out;
}

const session = new Session();
let profiling = false;
async function stopProfiler() {
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  return profile;
}
let cpu0 = process.cpuUsage();
let main0 = 0;
let threads0 = new Map<string, { kind: string; ms: number }>();

/** V8's sampling thread: the measurement's own cost, left out of Trawl's CPU. */
const PROFILER = 'profiler';

/** CPU ms of one thread of this process (/proc/self/task/<tid>/stat: user + system ticks). */
function threadCpuMs(tid: string): number {
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}
const mainThreadCpuMs = () => threadCpuMs(String(process.pid));

/**
 * CPU ms of the other threads by kind: V8's platform threads (garbage collection helpers and the
 * optimising compiler), libuv's pool (fs, dns.lookup, crypto), and the worker threads (the
 * gateway's CPU workers, the analysis pool), keyed by tid so that a window's delta can be taken.
 */
function threadCpu(): Map<string, { kind: string; ms: number }> {
  const out = new Map<string, { kind: string; ms: number }>();
  for (const tid of readdirSync('/proc/self/task')) {
    if (tid === String(process.pid)) continue;
    let comm = '';
    try {
      comm = readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
    } catch {
      continue;
    }
    const kind = /ProfEvnt/.test(comm)
      ? PROFILER
      : /^V8 /.test(comm)
        ? 'V8 platform threads (GC helpers, optimising compiler)'
        : /libuv/.test(comm)
          ? 'libuv pool (fs, dns, crypto)'
          : comm === 'node'
            ? // Node 20 leaves its V8 platform threads (4: concurrent and parallel GC, the
              // optimising compiler) and worker threads with the process's name
              'threads named "node" (V8 platform: GC helpers, compiler; worker threads)'
            : `thread "${comm.replace(/[\d-]+$/, '')}"`;
    out.set(tid, { kind, ms: threadCpuMs(tid) });
  }
  return out;
}
let counts0: Counts | undefined;

process.on('message', (m: ToChild) => {
  void (async () => {
    if (m.type === 'start') {
      await settled();
      counts0 = await tableCounts();
      profiling = m.profile !== false;
      if (profiling) {
        session.connect();
        await session.post('Profiler.enable');
        await session.post('Profiler.setSamplingInterval', { interval: 1000 });
        await session.post('Profiler.start');
      }
      cpu0 = process.cpuUsage();
      main0 = mainThreadCpuMs();
      threads0 = threadCpu();
      send({ type: 'pg-pids', pgPids: await pgPids() });
    } else if (m.type === 'stop') {
      // the inline milter answers before it records: its window ends with the last job recorded
      await settled();
      const cpu = process.cpuUsage(cpu0);
      const main = mainThreadCpuMs() - main0;
      const threads = new Map<string, number>();
      for (const [tid, t] of threadCpu()) {
        const d = t.ms - (threads0.get(tid)?.ms ?? 0);
        threads.set(t.kind, (threads.get(t.kind) ?? 0) + d);
      }
      const a = profiling
        ? attribute(await stopProfiler())
        : ({ busy: 0, samples: new Map(), parse: new Map(), unplaced: [] } satisfies Attribution);
      // the profile's share of each stage, scaled to the main thread's CPU time
      const scale = a.busy > 0 ? main / a.busy : 0;
      const ms = (m: Map<string, number>): [string, number][] =>
        [...m].map(([k, n]) => [k, n * scale]);
      const counts = await tableCounts();
      let rows: Counts | undefined;
      if (counts) {
        rows = {};
        for (const [t, c] of Object.entries(counts)) {
          const b = counts0?.[t] ?? { ins: 0, upd: 0, del: 0 };
          const d = { ins: c.ins - b.ins, upd: c.upd - b.upd, del: c.del - b.del };
          if (d.ins + d.upd + d.del > 0) rows[t] = d;
        }
      }
      send({
        type: 'stopped',
        processCpuMs: (cpu.user + cpu.system) / 1000 - (threads.get(PROFILER) ?? 0),
        profilerMs: threads.get(PROFILER) ?? 0,
        mainCpuMs: main,
        stages: ms(a.samples),
        parse: ms(a.parse),
        unplaced: a.unplaced.map(([k, n]) => [k, n * scale]),
        threads: [...threads].filter(([k]) => k !== PROFILER),
        ...(rows ? { rows } : {}),
      });
    } else if (m.type === 'close') {
      for (const c of closers.reverse()) await c().catch(() => undefined);
      process.exit(0);
    }
  })().catch((err) => {
    console.error(err);
    process.exit(1);
  });
});

try {
  await start();
  send({ type: 'ready', pgPids: await pgPids() });
} catch (err) {
  console.error(err);
  for (const c of closers.reverse()) await c().catch(() => undefined);
  process.exit(1);
}

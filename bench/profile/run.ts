/**
 * `pnpm bench:profile` (issue 29): where the CPU of a message goes on the mail path, stage by
 * stage, in both shapes. The path is bench:smtp's: a client → a real Postfix (Debian `postfix`, an
 * instance of its own) → content_filter to services/retriever-smtp → the mail orchestrator → the
 * gateway (raw submission) → the broker → the analyzer orchestrator (analysis, store) → the
 * verdict back to the filter → re-injection into Postfix → an SMTP sink.
 *
 * Trawl (the filter included) runs in a child process (bench/profile/trawl-process.ts) so that its
 * CPU is its own: `scale-out` (services on the local PostgreSQL, Redis and RabbitMQ, as bench:smtp
 * runs them) and `embedded` (the all-in-one start: PGlite, in-process broker and cache). Over the
 * measured window the child samples its main thread with V8's profiler and charges each sample to
 * a stage by the code it ran (bench/profile/stages.ts); its other threads (the gateway's CPU
 * workers, the analysis pool) are counted from the process's CPU. Beside it, from /proc: the CPU of
 * this run's PostgreSQL backends, of this run's Postfix processes, and of RabbitMQ and Redis
 * (machine-wide: other users of those servers count too). The baseline, on the same messages in
 * the same run: the analysis alone (parse + default workflow, `pnpm eval`'s runner, one thread) in
 * a process of its own warmed by as many messages as Trawl's. It also prints the rows each table took per message (scale-out).
 *
 * `--paths=milter-inline` profiles the milter analysing inline instead (ADR 024: Postfix's
 * `smtpd_milters` → the milter, which analyses in its process, answers, and records the job
 * afterwards on the same database and broker; the window ends when every job is recorded).
 *
 *   pnpm bench:profile                         # both paths and shapes, 300 messages, 8 connections
 *   pnpm bench:profile --paths=milter-inline --shapes=scale-out
 *   pnpm bench:profile --shapes=embedded --messages=200 --connections=4
 *   pnpm bench:profile --detail                # also the leaves charged to no stage
 *
 * Needs root and postfix; prints why and exits 0 without them. Not a timed test: it prints numbers.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  freePort,
  postfixAvailable,
  type SmtpSink,
  smtpClient,
  startSmtpSink,
  startTestPostfix,
} from '@trawl/retriever-smtp/testing';
import { analysisAloneWarm } from '../analysis-alone.ts';
import { message, writeMessagesAsCorpus } from '../support/smtp-messages.ts';
import { trawlChild } from './child.ts';
import { STAGES } from './stages.ts';
import type { StopAnswer, TrawlProcessArgs } from './trawl-process.ts';

const { values: opts } = parseArgs({
  options: {
    shapes: { type: 'string', default: 'scale-out,embedded' },
    paths: { type: 'string', default: 'filter,milter-inline' },
    messages: { type: 'string', default: '300' },
    // a running service is warm: the baseline beside it is measured after a first run too
    warmup: { type: 'string', default: '300' },
    connections: { type: 'string', default: '8' },
    detail: { type: 'boolean', default: false },
  },
});
const N = Math.max(1, Number(opts.messages));
const WARMUP = Math.max(1, Number(opts.warmup));
const CONNECTIONS = Math.max(1, Number(opts.connections));
const DETAIL = opts.detail === true;
const SHAPES = String(opts.shapes).split(',') as TrawlProcessArgs['shape'][];
const PATHS = String(opts.paths).split(',') as TrawlProcessArgs['path'][];

if (!postfixAvailable()) {
  console.log('bench:profile skipped: needs Debian postfix (/usr/sbin/postfix) and root');
  process.exit(0);
}

/** Offers `count` messages to Postfix over CONNECTIONS connections and waits for them at the sink. */
async function drive(port: number, sink: SmtpSink, tag: string, count: number): Promise<number> {
  const client = smtpClient(port, CONNECTIONS);
  const before = sink.messages.length;
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (next < count) {
        const i = next++;
        await client.sendMail({
          envelope: { from: 'sender@bench.trawl.test', to: ['bob@example.org'] },
          raw: message(tag, i),
        });
      }
    }),
  );
  client.close();
  await sink.waitFor(before + count, 600_000);
  return count / ((performance.now() - t0) / 1000);
}

/** CPU ms of a process (user + system) from /proc; null once it is gone. */
function cpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
  } catch {
    return null;
  }
}

/** Every process whose command is `name`, or whose parent is `parent`. */
function pids(match: (comm: string, ppid: number, pid: number) => boolean): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (match(comm, ppid, Number(e))) out.push(Number(e));
    } catch {
      // gone
    }
  }
  return out;
}

type Groups = Record<string, number[]>;
function snapshot(groups: Groups): Map<number, number> {
  const m = new Map<number, number>();
  for (const list of Object.values(groups)) {
    for (const pid of list) {
      const v = cpuMs(pid);
      if (v !== null) m.set(pid, v);
    }
  }
  return m;
}
function delta(start: Map<number, number>, groups: Groups): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [g, list] of Object.entries(groups)) {
    let sum = 0;
    for (const pid of list) {
      const v = cpuMs(pid);
      const s = start.get(pid);
      if (v !== null && s !== undefined) sum += v - s;
    }
    out[g] = sum;
  }
  return out;
}

/**
 * The analysis alone on the same messages: parse + default workflow, one thread, CPU ms/msg, in a
 * process of its own warmed by as many messages as Trawl's (bench/analysis-alone.ts): the median
 * of three runs.
 */
async function analysisAlone(work: string): Promise<number> {
  const dir = join(work, 'corpus');
  writeMessagesAsCorpus(dir, N);
  return (await analysisAloneWarm(dir, { warmup: WARMUP, runs: 3 })).cpuPerMsgMs;
}

interface ShapeResult {
  shape: string;
  msgsPerSecond: number;
  answer: StopAnswer;
  outside: Record<string, number>;
}

async function profileShape(
  shape: TrawlProcessArgs['shape'],
  path: TrawlProcessArgs['path'],
  work: string,
): Promise<ShapeResult> {
  const sink = await startSmtpSink();
  const [mailPort, httpPort, filterPort] = [await freePort(), await freePort(), await freePort()];
  const pf = await startTestPostfix(
    path === 'milter-inline'
      ? { mode: 'milter', milterPort: filterPort, sinkPort: sink.port }
      : { mode: 'after-queue', filterPort, sinkPort: sink.port },
  );
  const dataDir = join(work, `data-${shape}-${path}`);
  const c = trawlChild({
    shape,
    path,
    mailPort,
    httpPort,
    filterPort,
    returnPort: pf.returnPort,
    dataDir,
  });
  try {
    await c.next('ready');
    await drive(pf.port, sink, `warm-${shape}`, WARMUP);
    const master = Number(readFileSync(join(pf.dir, 'queue', 'pid', 'master.pid'), 'utf8').trim());
    c.send({ type: 'start' });
    const { pgPids } = await c.next('pg-pids');
    const groups: Groups = {
      'Postfix (this instance)': pids((_, ppid, pid) => pid === master || ppid === master),
      'PostgreSQL (this run’s backends)': pgPids,
      'RabbitMQ (machine-wide)': shape === 'scale-out' ? pids((comm) => comm === 'beam.smp') : [],
      'Redis (machine-wide)': shape === 'scale-out' ? pids((comm) => comm === 'redis-server') : [],
    };
    const start = snapshot(groups);
    const msgsPerSecond = await drive(pf.port, sink, shape, N);
    // Postfix forks smtpd/cleanup/smtp processes as it needs them: count those started meanwhile
    // from zero (their CPU before the window is only their start).
    const postfixNow = pids((_, ppid, pid) => pid === master || ppid === master);
    for (const pid of postfixNow) if (!start.has(pid)) start.set(pid, 0);
    groups['Postfix (this instance)'] = postfixNow;
    const outside = delta(start, groups);
    c.send({ type: 'stop' });
    const answer = await c.next('stopped');
    return { shape: `${shape}, ${path}`, msgsPerSecond, answer, outside };
  } finally {
    await c.close();
    await pf.destroy();
    await sink.close();
  }
}

function report(r: ShapeResult, alone: number): void {
  const f = (n: number, d = 2) => n.toFixed(d);
  const per = (ms: number) => ms / N;
  const a = r.answer;
  const stages = new Map(a.stages);
  const other = Math.max(0, a.processCpuMs - a.mainCpuMs);
  console.log(
    `\n${r.shape}: ${N} messages over ${CONNECTIONS} connections, ${f(r.msgsPerSecond, 1)} msgs/s`,
  );
  console.log(`${'stage (Trawl process, main thread, profiled)'.padEnd(52)} CPU ms/msg  share`);
  for (const s of STAGES) {
    const ms = stages.get(s) ?? 0;
    if (ms === 0) continue;
    console.log(
      `  ${s.padEnd(50)} ${f(per(ms)).padStart(9)}  ${f((100 * ms) / a.processCpuMs, 1).padStart(4)}%`,
    );
  }
  console.log(
    `  ${'main thread'.padEnd(50)} ${f(per(a.mainCpuMs)).padStart(9)}  ${f((100 * a.mainCpuMs) / a.processCpuMs, 1).padStart(4)}%`,
  );
  for (const [kind, ms] of a.threads) {
    console.log(
      `  ${kind.padEnd(50)} ${f(per(ms)).padStart(9)}  ${f((100 * ms) / a.processCpuMs, 1).padStart(4)}%`,
    );
  }
  console.log(
    `  ${'(process CPU not seen in a thread: threads that ended)'.padEnd(50)} ${f(per(Math.max(0, other - a.threads.reduce((x, [, ms]) => x + ms, 0)))).padStart(9)}`,
  );
  console.log(
    `  ${'Trawl process, every thread'.padEnd(50)} ${f(per(a.processCpuMs)).padStart(9)}`,
  );
  console.log(
    `  ${"(the profiler's own thread, not counted)".padEnd(50)} ${f(per(a.profilerMs)).padStart(9)}`,
  );
  for (const [g, ms] of Object.entries(r.outside)) {
    if (ms === 0 && g.includes('machine-wide')) continue;
    console.log(`  ${g.padEnd(50)} ${f(per(ms)).padStart(9)}`);
  }
  const analysis = stages.get('analysis (workflow, analyzers)') ?? 0;
  const pg = r.outside['PostgreSQL (this run’s backends)'] ?? 0;
  console.log(
    `analysis alone (same messages, its own process warmed as Trawl's, one thread): ${f(alone)} CPU ms/msg; ` +
      `Trawl process / analysis alone = ${f(per(a.processCpuMs) / alone)}×` +
      (pg > 0 ? `, with PostgreSQL ${f((per(a.processCpuMs) + per(pg)) / alone)}×` : '') +
      `; the analysis stage in the profile ${f(per(analysis))} ms/msg`,
  );
  const parse = a.parse.filter(([, ms]) => ms > 0);
  if (parse.length > 0) {
    console.log(
      `MIME parse (@trawl/mail parse-raw-email, mime/) by caller: ${parse
        .map(([s, ms]) => `${s} ${f(per(ms))}`)
        .join('; ')} ms/msg`,
    );
  }
  if (DETAIL) {
    console.log('leaf functions of the store and of no stage (function, file), CPU ms/msg:');
    for (const [k, ms] of a.unplaced) console.log(`  ${f(per(ms), 3).padStart(7)}  ${k}`);
  }
  if (a.rows) {
    const rows = Object.entries(a.rows).sort((x, y) => y[1].ins - x[1].ins);
    const ins = rows.reduce((s, [, c]) => s + c.ins, 0);
    const upd = rows.reduce((s, [, c]) => s + c.upd, 0);
    console.log(
      `rows per message: ${f(ins / N, 1)} inserted, ${f(upd / N, 1)} updated (${rows
        .map(([t, c]) => `${t} ${f(c.ins / N, 1)}${c.upd ? `/${f(c.upd / N, 1)}u` : ''}`)
        .join(', ')})`,
    );
  }
}

const work = mkdtempSync(join(tmpdir(), 'trawl-bench-profile-'));
try {
  console.log(
    `bench:profile ${new Date().toISOString()} messages=${N} connections=${CONNECTIONS} cores=${cpus().length} load=${loadavg()
      .map((l) => l.toFixed(1))
      .join('/')}`,
  );
  const alone = await analysisAlone(work);
  for (const path of PATHS)
    for (const shape of SHAPES) report(await profileShape(shape, path, work), alone);
  console.log(
    `load at the end: ${loadavg()
      .map((l) => l.toFixed(1))
      .join('/')}`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}

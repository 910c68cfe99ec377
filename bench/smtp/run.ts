/**
 * SMTP content filter benchmark (`pnpm bench:smtp`): messages per second through a real Postfix
 * (Debian `postfix`, an instance of its own in a temporary folder) and the latency the filter adds,
 * beside the same Postfix with no filter, in the same run:
 *  - `postfix alone`: client → Postfix (smtpd, queue) → relay to an SMTP sink;
 *  - `postfix + filter`: client → Postfix → content_filter (services/retriever-smtp, after-queue)
 *    → Trawl → verdict → re-injection to Postfix's return port → relay to the sink. Trawl is the
 *    scale-out shape on the local PostgreSQL, Redis and RabbitMQ (as the tests use them), its
 *    gateway, analyzer orchestrator and mail orchestrator in this process, with the shipped
 *    configuration; BENCH_SMTP_EMBEDDED=1 runs the embedded mode instead (PGlite, in-process
 *    broker and cache, analysis worker threads: what `pnpm start` runs);
 *  - `filter + own auth` (issue 32): the same with Trawl's own SPF, DKIM, DMARC and ARC check on
 *    (TRAWL_SMTP_VERIFY_AUTH), a second Postfix and filter on the same Trawl, against a DNS server
 *    this bench starts (RFC 1035 on 127.0.0.1), every message DKIM-signed by a key made here.
 *
 *  - `postfix + rspamd milter` (issue 29, the anchor): the same Postfix with Debian's Rspamd as
 *    its milter (`smtpd_milters`, protocol 6), started by bench/rspamd.ts (proxy worker in milter
 *    mode, self_scan, network modules off, every action above its scores: nothing refused); the
 *    row is skipped with the reason when Rspamd is absent or does not start;
 *  - `postfix + trawl milter` (issue 29): Postfix with Trawl's milter (TRAWL_SMTP_MODE=milter) on
 *    the same Trawl as the content filter: decided at the end of DATA, no re-injection; `remote`
 *    pushes each message to the mail orchestrator and waits for the verdict, `inline`
 *    (TRAWL_MILTER_ANALYSIS=inline, ADR 013 section 5) analyses in the milter's process and
 *    records the job afterwards on the same database and broker (its CPU counted until every job
 *    of the run is recorded).
 * CPU per message: the bench process (Trawl and the filter or milter, and the bench's own SMTP
 * client and sink; in scale-out shape the servers' CPU is not counted) and Rspamd's processes,
 * beside Trawl's analysis alone measured in the same run (the same messages, parse and default
 * workflow in-process on one thread: `pnpm eval`'s runner, in a process of its own warmed up by as
 * many messages as the inline milter).
 *
 * Each side: BENCH_SMTP_WARMUP messages first (default 200: a running filter is warm, and so is the baseline), then BENCH_SMTP_MESSAGES (default 300)
 * offered by BENCH_SMTP_CONNECTIONS client connections (default 8), then BENCH_SMTP_SERIAL
 * (default 30) one at a time. Prints msgs/s (first offer to last arrival), end-to-end latency
 * p50/p99 (offered to Postfix → arrived at the sink: a milter decides before Postfix accepts, so
 * the SMTP transaction is in it; under load this is mostly queueing) and, for
 * the filter, its own time per message p50/p99 (end of DATA → answer, verdict wait included); the
 * one-at-a-time runs give the latency the filter adds without queueing.
 * Needs root and postfix; prints why and exits 0 without them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbedded } from '@trawl/all-in-one';
import { findRepoRoot, loadConfig } from '@trawl/config';
import { deriveCredential } from '@trawl/contracts';
import {
  createDnsResolver,
  createSmtpFilter,
  SmtpSettings,
  startMilter,
} from '@trawl/retriever-smtp';
import {
  freePort,
  PLATFORM_KEY,
  postfixAvailable,
  type SmtpSink,
  sendingDomain,
  silentLogger,
  smtpClient,
  startSmtpSink,
  startTestDns,
  startTestPostfix,
  startTrawlStack,
} from '@trawl/retriever-smtp/testing';
import { analysisAlone, analysisAloneWarm } from '../analysis-alone.ts';
import { trawlChild } from '../profile/child.ts';
import { RSPAMD_EXPECTED, startRspamd } from '../rspamd.ts';
import { message, writeMessagesAsCorpus } from '../support/smtp-messages.ts';

const N = Math.max(1, Number(process.env.BENCH_SMTP_MESSAGES ?? 300));
const WARMUP = Math.max(0, Number(process.env.BENCH_SMTP_WARMUP ?? 200));
/**
 * The inline milter's warm-up: its process starts fresh, and V8 is still compiling its hot path
 * (the analysis, the milter, the recording) over its first few thousand messages (helper-thread CPU
 * 1.4–2.1 ms a message after 1,000, 0.8–1.0 after 3,000: docs/benchmarks.md); a running milter is
 * past that, as every other side here is (they share this process, warmed by the sides before).
 */
const INLINE_WARMUP = Math.max(0, Number(process.env.BENCH_SMTP_INLINE_WARMUP ?? 3000));
const CONNECTIONS = Math.max(1, Number(process.env.BENCH_SMTP_CONNECTIONS ?? 8));
/** Messages sent one at a time (each waits for the one before to arrive): latency without queueing. */
const SERIAL = Math.max(1, Number(process.env.BENCH_SMTP_SERIAL ?? 30));
const KEY = PLATFORM_KEY;
const EMBEDDED = process.env.BENCH_SMTP_EMBEDDED === '1';

if (!postfixAvailable()) {
  console.log('bench:smtp skipped: needs Debian postfix (/usr/sbin/postfix) and root');
  process.exit(0);
}

const silent = silentLogger;

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

interface Result {
  msgsPerSecond: number;
  p50: number;
  p99: number;
  lost: number;
  duplicated: number;
}

/** Offers `count` messages to Postfix and waits for them at the sink. */
async function drive(
  port: number,
  sink: SmtpSink,
  tag: string,
  count: number,
  connections = CONNECTIONS,
  make: (tag: string, i: number) => string | Promise<string> = message,
): Promise<Result> {
  const client = smtpClient(port, connections);
  const accepted = new Map<string, number>();
  const before = sink.messages.length;
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < count) {
        const i = next++;
        const offered = performance.now();
        await client.sendMail({
          envelope: { from: 'sender@bench.trawl.test', to: ['bob@example.org'] },
          raw: await make(tag, i),
        });
        accepted.set(`<${tag}-${i}@bench.trawl.test>`, offered);
        // One at a time: wait for it to arrive, so the latency holds no queueing.
        if (connections === 1) await sink.waitFor(before + i + 1, 120_000);
      }
    }),
  );
  client.close();
  await sink.waitFor(before + count, 600_000);
  const arrivals = sink.messages.slice(before);
  const last = Math.max(...arrivals.map((m) => m.at));
  const seen = new Map<string, number>();
  const latencies: number[] = [];
  for (const m of arrivals) {
    const id = m.header('message-id') ?? '';
    seen.set(id, (seen.get(id) ?? 0) + 1);
    const a = accepted.get(id);
    if (a !== undefined && seen.get(id) === 1) latencies.push(Math.max(0, m.at - a));
  }
  latencies.sort((a, b) => a - b);
  return {
    msgsPerSecond: count / ((last - t0) / 1000),
    p50: pct(latencies, 50),
    p99: pct(latencies, 99),
    lost: [...accepted.keys()].filter((id) => !seen.has(id)).length,
    duplicated: [...seen.values()].filter((n) => n > 1).length,
  };
}

/**
 * The `filter + own auth` side (issue 32): a second Postfix and filter (retriever `smtp-auth` of
 * the same Trawl) verifying SPF, DKIM, DMARC and ARC against a local DNS server, every message
 * DKIM-signed by bench.trawl.test (its SPF allows 127.0.0.1, its DMARC is p=reject).
 */
async function authSide(mailPort: number, httpPort: number, smtpPort: number) {
  const domain = sendingDomain('bench.trawl.test');
  const dns = await startTestDns(domain.zone);
  closers.push(() => dns.close());
  const pf = await startTestPostfix({
    mode: 'after-queue',
    filterPort: smtpPort,
    sinkPort: sink.port,
  });
  closers.push(() => pf.destroy());
  const filter = createSmtpFilter(
    SmtpSettings.parse({
      mail_orchestrator_url: `http://127.0.0.1:${mailPort}`,
      return_port: pf.returnPort,
      policy: 'none=deliver,low=deliver,medium=deliver,high=deliver,critical=deliver',
      unanalyzed_action: 'deliver',
      deadline_ms: 60_000,
      verify_auth: true,
      authserv_id: 'mx.bench.trawl.test',
    }),
    {
      logger: silent,
      credential: deriveCredential(KEY, { kind: 'retriever', id: 'smtp-auth' }),
      smtpPort,
      resolver: createDnsResolver({
        servers: [dns.address],
        timeoutMs: 2000,
        tries: 2,
        maxRecords: 50,
        maxTxtChars: 16 * 1024,
      }),
    },
  );
  await filter.app.listen({ host: '127.0.0.1', port: httpPort });
  await filter.start();
  closers.push(() => filter.stop());
  const signed = (tag: string, i: number) =>
    domain.sign(message(tag, i).replace(/^From: .*$/m, 'From: Alice <alice@bench.trawl.test>'));
  const times: number[] = [];
  const handle = filter.filter.handle;
  filter.filter.handle = async (raw, envelope) => {
    const t = performance.now();
    const a = await handle(raw, envelope);
    times.push(performance.now() - t);
    return a;
  };
  if (WARMUP > 0) await drive(pf.port, sink, 'warm-auth', WARMUP, CONNECTIONS, signed);
  const loaded = await drive(pf.port, sink, 'auth', N, CONNECTIONS, signed);
  times.length = 0;
  const serial = await drive(pf.port, sink, 'auth-serial', SERIAL, 1, signed);
  times.sort((a, b) => a - b);
  return {
    loaded,
    serial,
    filterP50: pct(times, 50),
    filterP99: pct(times, 99),
    queries: dns.queries(),
  };
}

/**
 * Trawl's analysis alone on the bench's messages: parse and the default workflow in-process on
 * one thread (`pnpm eval`'s runner), no SMTP, gateway, broker or store: CPU ms per message, the
 * median of three runs, measured two ways. `warm`, the ratio's denominator: in a fresh process of
 * its own warmed by as many messages as the inline milter (its CPU read as the milter's, every
 * thread of its process). `here`: in the bench's own process after the sides ran, as until
 * 2026-12-08 (its CPU also holds the bench's leftover garbage collection and compiles: it moved
 * 1.1–2.0 ms between runs of the same messages).
 */
async function analysisAloneCpuMs(
  dir: string,
): Promise<{ warm: number; warmRuns: number[]; here: number }> {
  writeMessagesAsCorpus(dir, N);
  const warm = await analysisAloneWarm(dir, { warmup: INLINE_WARMUP, runs: 3 });
  const runs: number[] = [];
  for (let r = 0; r < 3; r++) runs.push((await analysisAlone(dir, { workers: 0 })).cpuPerMsgMs);
  return {
    warm: warm.cpuPerMsgMs,
    warmRuns: warm.runs,
    here: runs.sort((a, b) => a - b)[1] as number,
  };
}

/** Postfix with Trawl's milter (retriever `smtp-milter` of the same Trawl). */
async function milterSide(mailPort: number, httpPort: number, port: number) {
  const pf = await startTestPostfix({ mode: 'milter', milterPort: port, sinkPort: sink.port });
  closers.push(() => pf.destroy());
  const settings = SmtpSettings.parse({
    mode: 'milter',
    mail_orchestrator_url: `http://127.0.0.1:${mailPort}`,
    policy: 'none=deliver,low=deliver,medium=deliver,high=deliver,critical=deliver',
    unanalyzed_action: 'deliver',
    deadline_ms: 60_000,
    verify_auth: false,
  });
  const filter = createSmtpFilter(settings, {
    logger: silent,
    credential: deriveCredential(KEY, { kind: 'retriever', id: 'smtp-milter' }),
  });
  await filter.app.listen({ host: '127.0.0.1', port: httpPort });
  const listener = await startMilter(filter, {
    settings,
    milter: { host: '127.0.0.1', port, maxPacketBytes: 128 * 1024 },
    logger: silent,
  });
  closers.push(async () => {
    await listener.close();
    await filter.stop();
  });
  if (WARMUP > 0) await drive(pf.port, sink, 'warm-milter', WARMUP);
  const cpu0 = process.cpuUsage();
  const loaded = await drive(pf.port, sink, 'milter', N);
  const cpu = process.cpuUsage(cpu0);
  const serial = await drive(pf.port, sink, 'milter-serial', SERIAL, 1);
  await listener.close();
  await pf.destroy();
  return { loaded, serial, cpuMs: (cpu.user + cpu.system) / 1000 / N };
}

/**
 * Postfix with Trawl's milter analysing inline (TRAWL_MILTER_ANALYSIS=inline): the verdict from
 * the milter's own analysis, the jobs recorded afterwards. The milter runs as it is deployed, a
 * process of its own beside Postfix (bench/profile/trawl-process.ts: scale-out, the milter alone
 * on a database and broker of its own on the local servers; embedded, the all-in-one start), not
 * on this process's event loop beside the bench's SMTP client and sink. Its CPU is that process's,
 * every thread, read once every job of the run is recorded.
 */
async function inlineMilterSide(httpPort: number, port: number) {
  const pf = await startTestPostfix({ mode: 'milter', milterPort: port, sinkPort: sink.port });
  closers.push(() => pf.destroy());
  const c = trawlChild({
    shape: EMBEDDED ? 'embedded' : 'scale-out',
    path: 'milter-inline',
    mailPort: await freePort(),
    httpPort,
    filterPort: port,
    returnPort: 0,
    dataDir: join(work, 'data-inline'),
  });
  closers.push(() => c.close());
  await c.next('ready');
  if (INLINE_WARMUP > 0) await drive(pf.port, sink, 'warm-inline', INLINE_WARMUP);
  c.send({ type: 'start', profile: false });
  await c.next('pg-pids');
  const loaded = await drive(pf.port, sink, 'inline', N);
  c.send({ type: 'stop' });
  const { processCpuMs } = await c.next('stopped');
  const serial = await drive(pf.port, sink, 'inline-serial', SERIAL, 1);
  await c.close();
  await pf.destroy();
  return { loaded, serial, cpuMs: processCpuMs / N };
}

/** Postfix with Rspamd's milter (the anchor); a reason instead when Rspamd is not there. */
async function rspamdSide() {
  const started = await startRspamd();
  if (!started.ok) return { skipped: started.why };
  const r = started.rspamd;
  closers.push(() => r.stop());
  const pf = await startTestPostfix({
    mode: 'milter',
    milterPort: r.milter.port,
    sinkPort: sink.port,
  });
  closers.push(() => pf.destroy());
  if (WARMUP > 0) await drive(pf.port, sink, 'warm-rspamd', WARMUP);
  const cpu0 = r.cpuSeconds();
  const loaded = await drive(pf.port, sink, 'rspamd', N);
  const cpuMs = ((r.cpuSeconds() - cpu0) * 1000) / N;
  const serial = await drive(pf.port, sink, 'rspamd-serial', SERIAL, 1);
  await pf.destroy();
  await r.stop();
  return { loaded, serial, cpuMs };
}

const work = mkdtempSync(join(tmpdir(), 'trawl-bench-smtp-'));
const sink = await startSmtpSink();
const closers: (() => Promise<unknown>)[] = [() => sink.close()];
try {
  // Side 1: Postfix alone.
  const bare = await startTestPostfix({ mode: 'none', sinkPort: sink.port });
  closers.push(() => bare.destroy());
  if (WARMUP > 0) await drive(bare.port, sink, 'warm-bare', WARMUP);
  // the bench process's own share (its SMTP client and sink) of every side's CPU per message
  const bareCpu0 = process.cpuUsage();
  const alone = await drive(bare.port, sink, 'bare', N);
  const bareCpu = process.cpuUsage(bareCpu0);
  const benchOwnCpuMs = (bareCpu.user + bareCpu.system) / 1000 / N;
  const aloneSerial = await drive(bare.port, sink, 'bare-serial', SERIAL, 1);
  await bare.destroy();

  const rspamd = await rspamdSide();

  // Side 2: Postfix + filter + Trawl.
  const [mailPort, httpPort, filterPort] = [await freePort(), await freePort(), await freePort()];
  const [authHttpPort, authFilterPort] = [await freePort(), await freePort()];
  const [milterHttpPort, milterPort] = [await freePort(), await freePort()];
  const [inlineHttpPort, inlinePort] = [await freePort(), await freePort()];
  if (EMBEDDED) {
    const cfg = loadConfig({
      env: {
        APP_ENV: 'dev',
        TRAWL_DATA_DIR: join(work, 'data'),
        TRAWL_ADMIN_USER: 'admin',
        TRAWL_ADMIN_PASSWORD: 'Correct-Horse-Battery-9',
        INTERNAL_API_KEY: KEY,
        TRAWL_MAIL_ORCHESTRATOR_PORT: String(mailPort),
        TRAWL_MAIL_RETRIEVERS: JSON.stringify({
          smtp: { url: `http://127.0.0.1:${httpPort}` },
          'smtp-auth': { url: `http://127.0.0.1:${authHttpPort}` },
          'smtp-milter': { url: `http://127.0.0.1:${milterHttpPort}` },
        }),
      },
      envFile: false,
      rootDir: findRepoRoot(),
      needs: { postgres: false, rabbitmq: false, redis: false, secretKey: true },
    });
    const trawl = await startEmbedded(cfg, { port: 0, host: '127.0.0.1', logger: silent });
    closers.push(() => trawl.close());
  } else {
    const trawl = await startTrawlStack({
      mailPort,
      filters: { smtp: httpPort, 'smtp-auth': authHttpPort, 'smtp-milter': milterHttpPort },
    });
    closers.push(() => trawl.close());
  }
  const pf = await startTestPostfix({ mode: 'after-queue', filterPort, sinkPort: sink.port });
  closers.push(() => pf.destroy());
  const filter = createSmtpFilter(
    SmtpSettings.parse({
      mail_orchestrator_url: `http://127.0.0.1:${mailPort}`,
      return_port: pf.returnPort,
      policy: 'none=deliver,low=deliver,medium=deliver,high=deliver,critical=deliver',
      unanalyzed_action: 'deliver',
      deadline_ms: 60_000,
    }),
    {
      logger: silent,
      credential: deriveCredential(KEY, { kind: 'retriever', id: 'smtp' }),
      smtpPort: filterPort,
    },
  );
  await filter.app.listen({ host: '127.0.0.1', port: httpPort });
  await filter.start();
  closers.push(() => filter.stop());
  // The filter's own time per message (the listener calls filter.handle).
  const inFilter: number[] = [];
  const handle = filter.filter.handle;
  filter.filter.handle = async (raw, envelope) => {
    const t = performance.now();
    const a = await handle(raw, envelope);
    inFilter.push(performance.now() - t);
    return a;
  };
  if (WARMUP > 0) await drive(pf.port, sink, 'warm-filter', WARMUP);
  inFilter.length = 0;
  const cpu0 = process.cpuUsage();
  const filtered = await drive(pf.port, sink, 'filter', N);
  const cpu = process.cpuUsage(cpu0);
  inFilter.sort((a, b) => a - b);
  const loaded = { p50: pct(inFilter, 50), p99: pct(inFilter, 99) };
  inFilter.length = 0;
  const filteredSerial = await drive(pf.port, sink, 'filter-serial', SERIAL, 1);
  inFilter.sort((a, b) => a - b);

  const auth = await authSide(mailPort, authHttpPort, authFilterPort);
  const milter = await milterSide(mailPort, milterHttpPort, milterPort);
  const inline = await inlineMilterSide(inlineHttpPort, inlinePort);
  const aloneRuns = await analysisAloneCpuMs(join(work, 'alone'));
  const aloneCpuMs = aloneRuns.warm;

  const f = (n: number, d = 1) => n.toFixed(d);
  console.log(
    `bench:smtp ${new Date().toISOString()} trawl=${EMBEDDED ? 'embedded' : 'scale-out, local servers'} messages=${N} connections=${CONNECTIONS} cores=${cpus().length} load=${loadavg()
      .map((l) => l.toFixed(1))
      .join('/')}`,
  );
  console.log(
    'side                              msgs/s   e2e p50 ms   e2e p99 ms   lost  duplicated',
  );
  const rows: [string, Result | undefined][] = [
    ['postfix alone', alone],
    ['postfix + rspamd milter', 'loaded' in rspamd ? rspamd.loaded : undefined],
    ['postfix + trawl content filter', filtered],
    ['postfix + trawl milter (remote)', milter.loaded],
    ['postfix + trawl milter (inline)', inline.loaded],
    ['trawl filter + own auth', auth.loaded],
    ['1 by 1: postfix alone', aloneSerial],
    ['1 by 1: + rspamd milter', 'serial' in rspamd ? rspamd.serial : undefined],
    ['1 by 1: + trawl content filter', filteredSerial],
    ['1 by 1: + milter (remote)', milter.serial],
    ['1 by 1: + milter (inline)', inline.serial],
    ['1 by 1: + filter, own auth', auth.serial],
  ];
  for (const [name, r] of rows) {
    if (!r) {
      console.log(`${name.padEnd(32)} skipped: ${'skipped' in rspamd ? rspamd.skipped : ''}`);
      continue;
    }
    console.log(
      `${name.padEnd(32)} ${f(r.msgsPerSecond).padStart(7)} ${f(r.p50, 0).padStart(12)} ${f(r.p99, 0).padStart(12)} ${String(r.lost).padStart(6)} ${String(r.duplicated).padStart(11)}`,
    );
  }
  if ('skipped' in rspamd) console.log(`rspamd milter expected as: ${RSPAMD_EXPECTED}`);
  console.log(
    `filter time per message (end of DATA → answer, Trawl's analysis included): loaded p50 ${f(loaded.p50, 0)} ms, p99 ${f(loaded.p99, 0)} ms; 1 by 1 p50 ${f(pct(inFilter, 50), 0)} ms, p99 ${f(pct(inFilter, 99), 0)} ms`,
  );
  const added = (r: Result) =>
    `${f(r.p50 - aloneSerial.p50, 0)} / ${f(r.p99 - aloneSerial.p99, 0)} ms`;
  console.log(
    `latency added, 1 by 1 (e2e p50 / p99 minus postfix alone): content filter ${added(filteredSerial)}; milter remote ${added(milter.serial)}; milter inline ${added(inline.serial)}${'serial' in rspamd ? `; rspamd milter ${added(rspamd.serial)}` : ''}`,
  );
  const filterCpuMs = (cpu.user + cpu.system) / 1000 / N;
  console.log(
    `CPU per message: Trawl's analysis alone ${f(aloneCpuMs, 2)} ms; bench process with Trawl + content filter ${f(filterCpuMs, 1)} ms (${f(filterCpuMs / aloneCpuMs, 2)}x), with Trawl + milter remote ${f(milter.cpuMs, 1)} ms (${f(milter.cpuMs / aloneCpuMs, 2)}x); the inline milter's own process ${f(inline.cpuMs, 2)} ms (${f(inline.cpuMs / aloneCpuMs, 2)}x the analysis alone)${'cpuMs' in rspamd ? `; rspamd ${f(rspamd.cpuMs, 1)} ms` : ''} (PostgreSQL, RabbitMQ, Redis not counted)`,
  );
  console.log(
    `analysis alone, the denominator: its own process warmed by ${INLINE_WARMUP} messages as the inline milter, median of ${aloneRuns.warmRuns.map((x) => f(x, 2)).join(', ')} ms; in the bench's process after the sides (as before 2026-12-08) ${f(aloneRuns.here, 2)} ms (inline milter ${f(inline.cpuMs / aloneRuns.here, 2)}x that)`,
  );
  console.log(
    `of which the bench's own SMTP client and sink (its CPU beside Postfix alone) ${f(benchOwnCpuMs, 1)} ms: Trawl's own with the milter remote ${f(milter.cpuMs - benchOwnCpuMs, 1)} ms`,
  );
  if ('loaded' in rspamd) {
    console.log(
      `trawl milter inline / rspamd milter msgs/s: ${f(inline.loaded.msgsPerSecond / rspamd.loaded.msgsPerSecond, 2)}x; remote: ${f(milter.loaded.msgsPerSecond / rspamd.loaded.msgsPerSecond, 2)}x; content filter / rspamd milter: ${f(filtered.msgsPerSecond / rspamd.loaded.msgsPerSecond, 2)}x; milter inline / postfix alone: ${f(inline.loaded.msgsPerSecond / alone.msgsPerSecond, 2)}x`,
    );
  }
  console.log(
    `own authentication (TRAWL_SMTP_VERIFY_AUTH, local DNS, DKIM-signed): msgs/s ${f(auth.loaded.msgsPerSecond)} vs ${f(filtered.msgsPerSecond)} without (ratio ${f(auth.loaded.msgsPerSecond / filtered.msgsPerSecond, 2)}); filter time 1 by 1 p50 ${f(auth.filterP50, 0)} ms, p99 ${f(auth.filterP99, 0)} ms; DNS queries ${auth.queries}`,
  );
  const all = [
    alone,
    filtered,
    aloneSerial,
    filteredSerial,
    auth.loaded,
    auth.serial,
    milter.loaded,
    milter.serial,
    inline.loaded,
    inline.serial,
    ...('loaded' in rspamd ? [rspamd.loaded, rspamd.serial] : []),
  ];
  if (all.some((r) => r !== undefined && r.lost + r.duplicated > 0)) process.exitCode = 1;
} finally {
  for (const c of closers.reverse()) await c().catch(() => undefined);
  rmSync(work, { recursive: true, force: true });
}

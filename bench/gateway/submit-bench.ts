/**
 * Gateway submission benchmark (`pnpm bench:gateway` runs bench/gateway/run.ts, which calls this; it
 * lives in the service's folder so it resolves the service's own dependencies).
 *
 * Measures POST /api/v1/analyze with a ~20 KB Email and a bearer token against a bare Fastify route
 * that only parses the same JSON, in the same run, on the same machine. autocannon runs in a child
 * process so the load generator does not share the servers' event loop.
 *
 * Adapters: `--adapters=real` (default; PostgreSQL + Redis + RabbitMQ on 127.0.0.1, the test servers
 * of docs/development.md, in a throwaway schema / key prefix / broker prefix) or `--adapters=embedded`
 * (PGlite, in-process broker and cache). When the RabbitMQ adapter is not available the real mode
 * falls back to the in-process broker and says so.
 * The real mode's queue is drained by a child process (drain-queue.ts), as the orchestrator would.
 * Throughput is the most a server answers per second once enough clients keep it busy: the bare
 * route is CPU-bound at a few connections, while the gateway waits on two durable writes per
 * submission (the row's commit, then the broker's confirm) and needs more requests in flight to
 * fill its event loop. So each target is measured at each connection count of the sweep, bare and
 * gateway in turn at each count, after an unmeasured warm-up of each; the headline ratio is the
 * gateway's best req/s over the bare route's best, and the ratio at each count is printed too.
 *
 * Options: --duration=10 (seconds per target and connection count), --connections=32,64,128 (the
 * sweep; one number for a single count), --warmup=3 (seconds), --pool=10 (PostgreSQL pool size,
 * the gateway's default), --log=info|warn (gateway log level; lines go to /dev/null),
 * --only=gateway (skip the bare route, e.g. to profile the gateway with --cpu-prof).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  buildApp,
  createConfigState,
  createGatewayLogger,
  defaultGatewayOptions,
  gatewayLogDestination,
  hashPassword,
  loadSnapshot,
} from '@trawl/api-gateway';
import { diffFiles, findRepoRoot, testInfra } from '@trawl/config';
import { topology } from '@trawl/contracts';
import type { Broker, Cache, Store } from '@trawl/platform';
import * as platform from '@trawl/platform';
import { memoryPlatform, testRedis, testSchema, uniqueSuffix } from '@trawl/platform/testing';
import type { CompiledWorkflow } from '@trawl/workflow-engine';
import Fastify from 'fastify';
import { type PidGroups, pidsNamed, since, snapshot } from '../support/cpu-accounting.ts';

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k, v ?? 'true'];
  }),
) as Record<string, string>;
const DURATION = Math.min(60, Math.max(1, Number(args.duration ?? 10)));
const CONNECTIONS = (args.connections ?? '32,64,128')
  .split(',')
  .map((c) => Math.min(256, Math.max(1, Math.trunc(Number(c)))))
  .filter((c) => Number.isFinite(c));
const WARMUP = Math.min(30, Math.max(0, Number(args.warmup ?? 3)));
const MODE = args.adapters === 'embedded' ? 'embedded' : 'real';
const POOL = Math.min(64, Math.max(1, Number(args.pool ?? 10)));
const LOG_LEVEL = args.log === 'warn' ? 'warn' : 'info';

const here = dirname(fileURLToPath(import.meta.url));
const fixtures = join(here, '..', 'fixtures');

/** The 20 KB submission body of the benchmark (also used by bench/gateway/components.ts). */
export function email20k() {
  const sentence = 'Dear customer, your account has been suspended. Verify your identity at once. ';
  return {
    email: {
      headers: {
        subject: 'Urgent: verify your account',
        sender: 'security@examp1e-bank.com',
        recipients: ['alice@example.org', 'bob@example.org'],
        date: '2024-05-01T09:30:00Z',
        raw_headers: { 'message-id': '<bench@examp1e-bank.com>', 'x-mailer': 'bench' },
      },
      body_text: sentence.repeat(128),
      body_html: `<html><body><p>${sentence.repeat(124)}</p><a href="http://examp1e-bank.com/login">login</a></body></html>`,
    },
  };
}

interface Platform {
  store: Store;
  broker: Broker;
  cache: Cache;
  topology: ReturnType<typeof topology>;
  label: string;
  /** Other processes doing this platform's work, for CPU accounting (see cpu-accounting.ts). */
  pids(): Promise<PidGroups>;
  close(): Promise<void>;
}

/** Starts drain-queue.ts in a child process and waits until it consumes. */
async function startDrain(
  url: string,
  queue: string,
): Promise<{ pid: number | undefined; stop(): Promise<void> }> {
  // node itself (not the tsx shell wrapper) so the pid is the consumer's, for CPU accounting
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(here, 'drain-queue.ts'), url, queue],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('drain process did not start'));
    }, 60_000);
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`drain process exited (${code})`)));
    child.stdout.on('data', (c: Buffer) => {
      if (c.toString().includes('ready')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return {
    pid: child.pid,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(killer);
          resolve();
        });
        child.stdin.end();
      }),
  };
}

async function realPlatform(): Promise<Platform> {
  const db = await testSchema({ max: POOL });
  const redis = testRedis();
  const t = topology(`bench${uniqueSuffix()}`);
  const url = testInfra().rabbitmqUrl;
  const broker = platform.createRabbitBroker({
    url,
    connectionName: `trawl-bench-${uniqueSuffix()}`,
  });
  const dropBroker = async () => {
    const names = platform.topologyNames(t);
    for (const q of names.queues) await broker.deleteQueue(q).catch(() => undefined);
    for (const e of names.exchanges) await broker.deleteExchange(e).catch(() => undefined);
    await broker.close();
  };
  let drain: Awaited<ReturnType<typeof startDrain>>;
  try {
    await platform.declareTopology(broker, t);
    // Drain the queue as the orchestrator would, in its own process, so messages do not pile up.
    drain = await startDrain(url, t.queues.analysisRequests);
  } catch (err) {
    await dropBroker().catch(() => undefined);
    await redis.cleanup().catch(() => undefined);
    await db.drop().catch(() => undefined);
    throw err;
  }
  return {
    store: db.store,
    broker,
    cache: redis.cache,
    topology: t,
    label: `PostgreSQL (pool ${POOL}) + Redis + RabbitMQ (publisher confirms; queue drained by another process)`,
    async pids() {
      const r = await db.sql.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
        [`trawl-test-${db.schema}`],
      );
      return {
        PostgreSQL: r.rows.map((x) => Number(x.pid)),
        'RabbitMQ (all users)': pidsNamed('beam.smp'),
        'Redis (all users)': pidsNamed('redis-server'),
        'drain process': drain.pid === undefined ? [] : [drain.pid],
      };
    },
    async close() {
      await drain.stop();
      await dropBroker();
      await redis.cleanup();
      await db.drop();
    },
  };
}

async function embeddedPlatform(): Promise<Platform> {
  const mp = await memoryPlatform();
  const consumer = await mp.broker.consume(mp.topology.queues.analysisRequests, (d) => d.ack(), {
    prefetch: 256,
  });
  return {
    ...mp,
    label: 'embedded: PGlite + in-process broker + in-process cache (queue drained in process)',
    pids: async () => ({}),
    async close() {
      await consumer.cancel();
      await mp.close();
    },
  };
}

interface Measure {
  /** Successful (2xx) answers per second: error answers are not throughput. */
  rps: number;
  p99: number;
  p50: number;
  /** Every answer, errors included. */
  total: number;
  /** The 2xx answers, what the throughput and the CPU per request count. */
  ok: number;
  non2xx: number;
  errors: number;
}

function autocannon(
  url: string,
  bodyFile: string,
  headers: Record<string, string>,
  connections: number,
  seconds = DURATION,
): Promise<Measure> {
  const bin = join(findRepoRoot(), 'node_modules', '.bin', 'autocannon');
  const argv = [
    '-j',
    '-c',
    String(connections),
    '-d',
    String(seconds),
    '-m',
    'POST',
    '-i',
    bodyFile,
  ];
  for (const [k, v] of Object.entries(headers)) argv.push('-H', `${k}=${v}`);
  argv.push(url);
  return new Promise((resolve, reject) => {
    const child = spawn(bin, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.resume();
    const killer = setTimeout(() => child.kill('SIGKILL'), (seconds + 30) * 1000);
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(killer);
      try {
        const r = JSON.parse(out) as {
          requests: { average: number; total: number };
          latency: { p99: number; p50: number };
          '2xx': number;
          duration: number;
          non2xx: number;
          errors: number;
        };
        resolve({
          rps: r.duration > 0 ? r['2xx'] / r.duration : 0,
          ok: r['2xx'],
          p99: r.latency.p99,
          p50: r.latency.p50,
          total: r.requests.total,
          non2xx: r.non2xx,
          errors: r.errors,
        });
      } catch (err) {
        reject(new Error(`autocannon output not understood: ${String(err)}: ${out.slice(0, 200)}`));
      }
    });
  });
}

export async function runGatewayBench(): Promise<void> {
  const p = MODE === 'embedded' ? await embeddedPlatform() : await realPlatform();
  const tmp = mkdtempSync(join(tmpdir(), 'trawl-bench-'));
  const bodyFile = join(tmp, 'body.json');
  const body = JSON.stringify(email20k());
  writeFileSync(bodyFile, body);

  const files = {
    configFile: join(fixtures, 'service.yaml'),
    workflowsFile: join(fixtures, 'workflows.yaml'),
  };
  const configState = createConfigState<CompiledWorkflow>({
    initial: loadSnapshot(files),
    load: () => loadSnapshot(files),
    diff: diffFiles,
    store: p.store,
  });
  await p.store.users.create({
    username: 'bench',
    password_hash: await hashPassword('bench-password-123'),
    roles: ['analyst'],
  });
  const gateway = await buildApp({
    config: defaultGatewayOptions({
      secretKey: `bench-${uniqueSuffix()}-0123456789abcdef0123456789`,
    }),
    store: p.store,
    broker: p.broker,
    cache: p.cache,
    topology: p.topology,
    configState,
    invoker: {
      analyze: async () => {
        throw new Error('not used');
      },
      enrich: async () => {
        throw new Error('not used');
      },
    },
    // Production logging (main.ts's buffered destination; one request line per submission, with
    // its job_id), to /dev/null.
    logger: createGatewayLogger(LOG_LEVEL, gatewayLogDestination('/dev/null')),
    version: 'bench',
  });
  const bare = Fastify({ bodyLimit: 10 * 1024 * 1024 });
  bare.post('/analyze', async (request) => ({ ok: typeof request.body === 'object' }));

  try {
    const gwUrl = await gateway.listen({ host: '127.0.0.1', port: 0 });
    const bareUrl = await bare.listen({ host: '127.0.0.1', port: 0 });
    const tokenRes = await fetch(`${gwUrl}/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=password&username=bench&password=bench-password-123',
    });
    const { access_token } = (await tokenRes.json()) as { access_token: string };
    const check = await fetch(`${gwUrl}/api/v1/analyze`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${access_token}` },
      body,
    });
    if (check.status !== 200)
      throw new Error(`gateway submission failed: ${check.status} ${await check.text()}`);

    console.log(
      `gateway benchmark: ${Buffer.byteLength(body)} byte submissions, ${CONNECTIONS.join(', ')} connections, ${DURATION} s each (after ${WARMUP} s of warm-up)`,
    );
    console.log(`adapters: ${p.label}`);
    console.log(
      `gateway log level: ${LOG_LEVEL} (to /dev/null); load average: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')} on ${cpus().length} cores`,
    );
    const json = { 'content-type': 'application/json' };
    const gwHeaders = { ...json, authorization: `Bearer ${access_token}` };
    const self = { 'server process': [process.pid] };
    const groups = async () => ({ ...self, ...(await p.pids()) });
    const skipBare = args.only === 'gateway';
    const none: Measure = {
      rps: Number.NaN,
      p50: 0,
      p99: 0,
      total: 0,
      ok: 0,
      non2xx: 0,
      errors: 0,
    };
    const first = CONNECTIONS[0] ?? 32;
    if (WARMUP > 0) {
      if (!skipBare) await autocannon(`${bareUrl}/analyze`, bodyFile, json, first, WARMUP);
      await autocannon(`${gwUrl}/api/v1/analyze`, bodyFile, gwHeaders, first, WARMUP);
    }
    interface Level {
      connections: number;
      b: Measure;
      g: Measure;
      bCpu: Record<string, number>;
      gCpu: Record<string, number>;
    }
    const levels: Level[] = [];
    for (const c of CONNECTIONS) {
      const b0 = snapshot(self);
      const b = skipBare ? none : await autocannon(`${bareUrl}/analyze`, bodyFile, json, c);
      const bCpu = since(b0, self);
      const g0 = snapshot(await groups());
      const g = await autocannon(`${gwUrl}/api/v1/analyze`, bodyFile, gwHeaders, c);
      const gCpu = since(g0, await groups());
      levels.push({ connections: c, b, g, bCpu, gCpu });
    }
    const row = (name: string, m: Measure) =>
      `${name.padEnd(30)} ${m.rps.toFixed(0).padStart(8)} req/s (2xx)   p50 ${String(m.p50).padStart(4)} ms   p99 ${String(m.p99).padStart(4)} ms   (${m.total} requests, ${m.non2xx} non-2xx, ${m.errors} errors)`;
    for (const l of levels) {
      console.log(row(`bare Fastify (parse only) c=${l.connections}`, l.b));
      console.log(row(`gateway POST /analyze     c=${l.connections}`, l.g));
      console.log(
        `  ratio at ${l.connections} connections: ${((l.g.rps / l.b.rps) * 100).toFixed(1)}%`,
      );
    }
    const best = (pick: (l: Level) => Measure) =>
      levels.reduce((a, l) => (pick(l).rps > pick(a).rps ? l : a));
    const bBest = best((l) => l.b);
    const gBest = best((l) => l.g);
    const b = bBest.b;
    const g = gBest.g;
    console.log(
      `bare Fastify throughput ${b.rps.toFixed(0)} req/s (at ${bBest.connections} connections), gateway ${g.rps.toFixed(0)} req/s (at ${gBest.connections})`,
    );
    const ratio = g.rps / b.rps;
    console.log(`ratio gateway/bare: ${(ratio * 100).toFixed(1)}% (aim >= 30%)`);
    // CPU per request: what each answer costs the machine, much less sensitive to others' load.
    const perReq = (cpu: Record<string, number>, m: Measure) =>
      Object.entries(cpu).map(([k, v]) => [k, m.ok > 0 ? v / m.ok : 0] as const);
    const fmt = (xs: ReadonlyArray<readonly [string, number]>) =>
      xs.map(([k, v]) => `${k} ${v.toFixed(3)}`).join(', ');
    const bPer = perReq(bBest.bCpu, b);
    const gPer = perReq(gBest.gCpu, g);
    const own = (xs: ReadonlyArray<readonly [string, number]>) =>
      xs.filter(([k]) => !k.includes('all users')).reduce((a, [, v]) => a + v, 0);
    if (bPer.length > 0) {
      console.log(`CPU ms per request, bare:    ${fmt(bPer)}`);
      console.log(`CPU ms per request, gateway: ${fmt(gPer)}`);
      const gateOnly = gPer.find(([k]) => k === 'server process')?.[1] ?? 0;
      console.log(
        `CPU-cost ratio bare/gateway: server process only ${((own(bPer) / gateOnly) * 100).toFixed(1)}%, ` +
          `with its own PostgreSQL backends and drain ${((own(bPer) / own(gPer)) * 100).toFixed(1)}% ` +
          '(the throughput ratio on an otherwise idle machine would fall between these when CPU-bound)',
      );
    }
    if (g.non2xx > 0 || g.errors > 0)
      console.log('warning: the gateway answered errors during the run');
  } finally {
    await gateway.close();
    await bare.close();
    await p.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  corpusPhishing,
  createRunDatabase,
  endRun,
  freePort,
  type Proc,
  ROOT,
  runCmd,
  SYNTHETIC_EML,
  startProc,
} from './helpers.ts';

/**
 * Scale-out mode on this machine's PostgreSQL, Redis and RabbitMQ: the gateway, two analyzer
 * orchestrators and the built-in analyzers each in its own process (their src/main.ts with tsx),
 * then the same CLI flow as a user. Isolation: an own database, an own Redis database number with
 * the services' `trawl:` prefix cleaned afterwards, own broker names (TRAWL_BROKER_PREFIX) on the
 * vhost trawl_test.
 */

const MAINS = {
  gateway: 'services/api-gateway/src/main.ts',
  orchestrator: 'services/analyzer-orchestrator/src/main.ts',
  analyzers: 'services/analyzers/src/main.ts',
};
const missing = Object.values(MAINS).filter((m) => !existsSync(join(ROOT, m)));

const id = randomBytes(4).toString('hex');
const dbName = `trawl_e2e_${id}`;
const prefix = `e2e-${id}`;
const redisDb = 11;
const work = mkdtempSync(join(tmpdir(), 'trawl-e2e-scale-'));
const procs: Proc[] = [];
const password = randomBytes(12).toString('base64url');
let gatewayUrl = '';
let orchPorts: number[] = [];
let env: Record<string, string | undefined> = {};

const tsx = join(ROOT, 'node_modules/.bin/tsx');

async function healthy(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (r.ok) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not become healthy`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function service(name: string, main: string, extra: Record<string, string> = {}): Proc {
  // node --import tsx (one process): the tsx CLI would SIGKILL a busy child on SIGTERM.
  const p = startProc(process.execPath, ['--import', 'tsx', main], {
    cwd: ROOT,
    env: { ...env, ...extra },
    detached: true,
  });
  procs.push(p);
  (p as Proc & { name?: string }).name = name;
  return p;
}

const trawl = (args: string[], input?: string) =>
  runCmd(tsx, ['packages/cli/src/main.ts', ...args], {
    cwd: ROOT,
    env,
    ...(input === undefined ? {} : { input }),
    timeoutMs: 120_000,
  });

beforeAll(async () => {
  if (missing.length > 0) return;
  await createRunDatabase(dbName);
  const gwPort = await freePort();
  const anPort = await freePort();
  orchPorts = [await freePort(), await freePort()];
  gatewayUrl = `http://127.0.0.1:${gwPort}`;
  env = {
    PATH: process.env.PATH,
    HOME: join(work, 'home'),
    XDG_CONFIG_HOME: join(work, 'xdg'),
    APP_ENV: 'prod',
    LOG_LEVEL: 'WARNING',
    SECRET_KEY: randomBytes(48).toString('base64url'),
    INTERNAL_API_KEY: randomBytes(48).toString('base64url'),
    TRAWL_ADMIN_USER: 'admin',
    TRAWL_ADMIN_PASSWORD: password,
    DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${dbName}`,
    REDIS_URL: `redis://127.0.0.1:6379/${redisDb}`,
    RABBITMQ_URL: 'amqp://guest:guest@127.0.0.1:5672/trawl_test',
    TRAWL_BROKER_PREFIX: prefix,
    TRAWL_HOST: '127.0.0.1',
    API_GATEWAY_PORT: String(gwPort),
    TRAWL_GATEWAY_URL: gatewayUrl,
    TRAWL_ANALYZERS_PORT: String(anPort),
    TRAWL_ANALYZERS_HOST: '127.0.0.1',
    // One job at a time per replica: the two orchestrators share the queue visibly.
    TRAWL_ORCHESTRATOR_PREFETCH: '1',
    TRAWL_DATA_DIR: join(work, 'data'),
  };
  service('api-gateway', MAINS.gateway);
  await healthy(`${gatewayUrl}/health`, 120_000);
  service('analyzers', MAINS.analyzers);
  await healthy(`http://127.0.0.1:${anPort}/health`, 120_000);
  for (const p of orchPorts) {
    service(`orchestrator:${p}`, MAINS.orchestrator, { TRAWL_ORCHESTRATOR_PORT: String(p) });
  }
  for (const p of orchPorts) await healthy(`http://127.0.0.1:${p}/health`, 120_000);
}, 300_000);

afterAll(async () => {
  await endRun(procs, work, missing.length > 0 ? undefined : { database: dbName, prefix, env });
}, 120_000);

async function processedBy(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  let n = 0;
  for (const m of text.matchAll(/^trawl_jobs_total\{[^}]*\} (\d+(?:\.\d+)?)$/gm)) n += Number(m[1]);
  return n;
}

describe.skipIf(missing.length > 0)('scale-out mode: gateway, two orchestrators, analyzers', () => {
  it('logs in and analyzes a phishing message with the CLI', async () => {
    const login = await trawl(
      ['login', '--url', gatewayUrl, '--user', 'admin', '--password-stdin'],
      `${password}\n`,
    );
    expect(login.code, login.stderr).toBe(0);

    let eml = corpusPhishing();
    if (!eml) {
      eml = join(work, 'synthetic.eml');
      writeFileSync(eml, SYNTHETIC_EML);
    }
    const res = await trawl(['analyze', eml, '--wait', '--json']);
    expect([0, 10], res.stderr).toContain(res.code);
    const job = JSON.parse(res.stdout);
    expect(job.status).toBe('completed');
    expect(res.code).toBe(job.result.is_phishing ? 10 : 0);

    const again = await trawl(['job', job.job_id, '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).result).toEqual(job.result);
  }, 180_000);

  it('shares the queue between the two orchestrators', async () => {
    const before = await Promise.all(orchPorts.map(processedBy));
    // Eight users at once, each waiting for its verdict.
    const analyze = async (i: number) => {
      const r = await trawl(
        ['analyze', '-', '--wait', '--json'],
        SYNTHETIC_EML.replace('synthetic-1@', `s-${i}@`),
      );
      expect([0, 10], r.stderr).toContain(r.code);
      return JSON.parse(r.stdout) as { status: string };
    };
    const jobs = await Promise.all(Array.from({ length: 8 }, (_, i) => analyze(i)));
    for (const j of jobs) expect(j.status).toBe('completed');
    const after = await Promise.all(orchPorts.map(processedBy));
    const done = after.map((n, i) => n - (before[i] ?? 0));
    process.stdout.write(`[e2e scale-out] jobs per orchestrator: ${done.join(' + ')}\n`);
    expect(done.reduce((a, b) => a + b, 0)).toBe(jobs.length);
    // Competing consumers: each orchestrator took a share (eight separate submissions, delivered
    // round-robin by the broker), not one of them every job.
    expect(done).toHaveLength(2);
    for (const [i, n] of done.entries())
      expect(n, `orchestrator ${i + 1} did no job`).toBeGreaterThan(0);
  }, 240_000);
});

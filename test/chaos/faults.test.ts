/**
 * Fault tests under load, against the real servers (one file: the faults run one after the other,
 * so that a server restart does not blur the count of a process fault). Trawl's own processes first:
 * SIGKILL of one of two orchestrators, an analyzer failing half its calls, an analyzer that never
 * answers; then the servers it depends on: Redis stopped, PostgreSQL restarted, RabbitMQ restarted.
 * The server faults disturb everyone using this machine's servers: each outage lasts a few seconds,
 * and every server is started again in `finally` and checked in afterAll even when a test fails.
 * Each test ends by printing its counts (`chaos <fault>: submitted=... completed=... failed=...`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  account,
  type ChaosEnv,
  invariants,
  loadWithFault,
  run,
  startChaos,
  ZERO,
} from './support.ts';

const OUTAGE_MS = 3000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check().catch(() => false)) return true;
    await sleep(300);
  }
  return false;
}

const redisUp = async () =>
  (await run('redis-cli', ['-h', '127.0.0.1', '-p', '6379', 'ping'])).stdout.includes('PONG');
const pgUp = async () => {
  await run('pg_isready', ['-h', '127.0.0.1', '-p', '5432', '-q']);
  return true;
};
const rabbitUp = async () => {
  await run('rabbitmqctl', ['-q', 'await_startup'], { timeout: 60_000 });
  return true;
};
const pgVersion = async () =>
  (await run('ls', ['/etc/postgresql'])).stdout.split('\n')[0] as string;

async function startRedis(): Promise<void> {
  if (await redisUp().catch(() => false)) return;
  // the command of scripts/services.sh
  await run('redis-server', [
    '--daemonize',
    'yes',
    '--bind',
    '127.0.0.1',
    '-::1',
    '--port',
    '6379',
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    '/var/lib/redis',
    '--logfile',
    '/var/log/redis/ci.log',
  ]);
  await until(redisUp, 30_000);
}
async function startPg(): Promise<void> {
  if (await pgUp().catch(() => false)) return;
  await run('pg_ctlcluster', ['--skip-systemctl-redirect', await pgVersion(), 'main', 'start']);
  await until(pgUp, 60_000);
}
async function startRabbit(): Promise<void> {
  await run('rabbitmqctl', ['start_app'], { timeout: 120_000 }).catch(() => {});
  await until(rabbitUp, 120_000);
}

describe('chaos: faults under load', () => {
  let env: ChaosEnv;
  beforeAll(async () => {
    env = await startChaos({ orchestrators: 2 });
  }, 180_000);
  afterAll(async () => {
    // whatever happened: every server is back
    await startRedis().catch(() => {});
    await startPg().catch(() => {});
    await startRabbit().catch(() => {});
    await env?.close();
  }, 240_000);

  it('SIGKILL of an orchestrator: its unacknowledged jobs go to the other replica', async () => {
    const victim = env.cluster.services.find((s) => s.name === 'orchestrator-1');
    if (!victim) throw new Error('no orchestrator-1');
    const r = await loadWithFault(env, {
      count: 120,
      rate: 30,
      workflowId: 'chaos',
      faultAfter: 40,
      fault: async () => {
        victim.child.kill('SIGKILL');
        await victim.exited;
      },
    });
    const c = await account(env, 'orchestrator SIGKILL', r);
    expect(invariants(c)).toEqual(ZERO);
    expect(c.submitted).toBeGreaterThan(0);
    // a replacement for the next tests
    await env.cluster.addOrchestrator();
  }, 180_000);

  it('an analyzer failing half its calls: retried, every job completes', async () => {
    const before = (await env.faults.calls()).flaky;
    const r = await loadWithFault(env, { count: 80, rate: 30, workflowId: 'chaos-flaky' });
    const c = await account(env, 'analyzer fails 1 call in 2', r);
    const calls = (await env.faults.calls()).flaky - before;
    process.stdout.write(
      `chaos analyzer fails 1 call in 2: flaky calls=${calls} for ${c.submitted} jobs\n`,
    );
    expect(invariants(c)).toEqual(ZERO);
    expect(c.completed).toBe(c.submitted);
    expect(calls).toBeGreaterThan(c.submitted);
  }, 180_000);

  it('an analyzer that never answers: cut at its timeout, skipped, every job completes', async () => {
    const r = await loadWithFault(env, { count: 60, rate: 30, workflowId: 'chaos-hang' });
    const c = await account(env, 'analyzer never answers', r);
    expect(invariants(c)).toEqual(ZERO);
    expect(c.completed).toBe(c.submitted);
    expect((await env.faults.calls()).hang).toBeGreaterThanOrEqual(c.submitted);
  }, 180_000);

  it('Redis stopped: submissions go on, status reads fall back to PostgreSQL', async () => {
    const statusDuring: number[] = [];
    const readMs: number[] = [];
    const phases: Record<string, number> = {};
    let cacheBack = false;
    // the gateway's health answers `components.cache.status` from a PING through its own client
    const gatewayCacheOk = async () => {
      const res = await fetch(`${env.cluster.gatewayUrl}/api/v1/system/health`, {
        headers: env.cluster.headers(),
      });
      const body = (await res.json()) as { components?: { cache?: { status?: string } } };
      return body.components?.cache?.status === 'ok';
    };
    const r = await loadWithFault(env, {
      count: 90,
      rate: 30,
      workflowId: 'chaos',
      faultAfter: 30,
      fault: async () => {
        try {
          await run('redis-cli', ['-h', '127.0.0.1', '-p', '6379', 'shutdown', 'nosave']).catch(
            () => {},
          );
          await sleep(500);
          const t0 = performance.now();
          for (const id of [...env.accepted].slice(0, 5)) {
            const t = performance.now();
            const res = await fetch(`${env.cluster.gatewayUrl}/api/v1/analyze/${id}`, {
              headers: env.cluster.headers(),
            });
            statusDuring.push(res.status);
            await res.arrayBuffer();
            readMs.push(Math.round(performance.now() - t));
          }
          phases.status_reads_ms = Math.round(performance.now() - t0);
          await sleep(OUTAGE_MS);
        } finally {
          const t1 = performance.now();
          await startRedis();
          phases.redis_start_ms = Math.round(performance.now() - t1);
          // the clients reconnect in the background: the gateway uses its cache again
          const t2 = performance.now();
          cacheBack = await until(gatewayCacheOk, 30_000);
          phases.gateway_cache_back_ms = Math.round(performance.now() - t2);
        }
      },
    });
    const c = await account(env, 'Redis stopped', r);
    process.stdout.write(
      `chaos Redis stopped: status reads during the outage ${statusDuring} in ms ${readMs} ${JSON.stringify(phases)}\n`,
    );
    expect(invariants(c)).toEqual(ZERO);
    expect(statusDuring.length).toBeGreaterThan(0);
    expect(statusDuring.every((s) => s === 200)).toBe(true);
    expect(cacheBack).toBe(true);
  }, 180_000);

  it('PostgreSQL restarted: submissions answer 503 while it is down, nothing half-written', async () => {
    const version = await pgVersion();
    const r = await loadWithFault(env, {
      count: 90,
      rate: 30,
      workflowId: 'chaos',
      faultAfter: 30,
      fault: async () => {
        try {
          await run('pg_ctlcluster', [
            '--skip-systemctl-redirect',
            version,
            'main',
            'stop',
            '-m',
            'fast',
          ]);
          await sleep(OUTAGE_MS);
        } finally {
          await startPg();
        }
      },
    });
    const c = await account(env, 'PostgreSQL restarted', r);
    expect(invariants(c)).toEqual(ZERO);
    const bad = Object.keys(r.duringFault).filter((k) => k !== '200' && k !== '503');
    expect(bad).toEqual([]);
  }, 180_000);

  it('RabbitMQ restarted: submissions answer 503 while it is down; jobs resume after', async () => {
    const r = await loadWithFault(env, {
      count: 90,
      rate: 30,
      workflowId: 'chaos',
      faultAfter: 30,
      fault: async () => {
        try {
          await run('rabbitmqctl', ['stop_app'], { timeout: 120_000 });
          await sleep(OUTAGE_MS);
        } finally {
          await startRabbit();
        }
      },
    });
    const c = await account(env, 'RabbitMQ restarted', r, 120_000);
    expect(invariants(c)).toEqual(ZERO);
    const bad = Object.keys(r.duringFault).filter((k) => k !== '200' && k !== '503');
    expect(bad).toEqual([]);
  }, 240_000);
});

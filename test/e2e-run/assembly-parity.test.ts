import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createRunDatabase,
  endRun,
  freePort,
  importVia,
  type Proc,
  ROOT,
  startProc,
} from './helpers.ts';

/**
 * Issue 30 (ADR 021): the two shapes are the same assemblies. The scale-out services (their
 * src/main.ts, each its own process) and embedded mode (startEmbedded, in this process) start with
 * the same configuration on this machine's PostgreSQL, Redis and RabbitMQ; each assembly's
 * describe() (what it compiled: pools, deadlines, batch sizes, stop order) must be the same in
 * both. A default decided in one shape only (analysis workers, a grace period) fails here.
 * Isolation: an own database, an own Redis database number, own broker names on trawl_test.
 */

const MAINS = {
  gateway: 'services/api-gateway/src/main.ts',
  orchestrator: 'services/analyzer-orchestrator/src/main.ts',
  mail: 'services/mail-orchestrator/src/main.ts',
  analyzers: 'services/analyzers/src/main.ts',
};
const missing = Object.values(MAINS).filter((m) => !existsSync(join(ROOT, m)));

const id = randomBytes(4).toString('hex');
const dbName = `trawl_parity_${id}`;
const prefix = `parity-${id}`;
const redisDb = 12;
const work = mkdtempSync(join(tmpdir(), 'trawl-parity-'));
const procs: Proc[] = [];
let env: Record<string, string> = {};
/** The description each scale-out process logged at start ("assembled"). */
const logged: Record<string, Record<string, unknown>> = {};

function service(main: string, extra: Record<string, string>): Proc {
  const p = startProc(process.execPath, ['--import', 'tsx', main], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, ...env, ...extra },
    detached: true,
  });
  procs.push(p);
  return p;
}

/** The `assembly` of the JSON log line `assembled` a process printed. */
async function assemblyOf(p: Proc): Promise<Record<string, unknown>> {
  await p.waitFor(/"msg":"assembled"/, 120_000);
  const line = p
    .out()
    .split('\n')
    .find((l) => l.includes('"msg":"assembled"'));
  return (JSON.parse(line ?? '{}') as { assembly: Record<string, unknown> }).assembly;
}

beforeAll(async () => {
  if (missing.length > 0) return;
  await createRunDatabase(dbName);
  env = {
    HOME: join(work, 'home'),
    TRAWL_ENV_FILE: 'none',
    APP_ENV: 'prod',
    LOG_LEVEL: 'INFO',
    SECRET_KEY: randomBytes(48).toString('base64url'),
    INTERNAL_API_KEY: randomBytes(48).toString('base64url'),
    DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${dbName}`,
    REDIS_URL: `redis://127.0.0.1:6379/${redisDb}`,
    RABBITMQ_URL: 'amqp://guest:guest@127.0.0.1:5672/trawl_test',
    TRAWL_BROKER_PREFIX: prefix,
    TRAWL_HOST: '127.0.0.1',
    TRAWL_DATA_DIR: join(work, 'data'),
    // a retriever nobody serves: the mail orchestrator runs (and backs off) in both shapes
    TRAWL_MAIL_RETRIEVERS: JSON.stringify({ box: { url: 'http://127.0.0.1:9' } }),
    // settings that are not the defaults, to see them reach both shapes
    TRAWL_ORCHESTRATOR_PREFETCH: '7',
    TRAWL_ORCHESTRATOR_SHUTDOWN_GRACE_MS: '4000',
  };
  const gwPort = await freePort();
  env.API_GATEWAY_PORT = String(gwPort);
  env.TRAWL_GATEWAY_URL = `http://127.0.0.1:${gwPort}`;
  const gateway = service(MAINS.gateway, {});
  logged.gateway = await assemblyOf(gateway);
  const orchestrator = service(MAINS.orchestrator, {
    TRAWL_ORCHESTRATOR_PORT: String(await freePort()),
  });
  const mail = service(MAINS.mail, { TRAWL_MAIL_ORCHESTRATOR_PORT: String(await freePort()) });
  const analyzers = service(MAINS.analyzers, { TRAWL_ANALYZERS_PORT: String(await freePort()) });
  logged.orchestrator = await assemblyOf(orchestrator);
  logged.mail = await assemblyOf(mail);
  logged.analyzers = await assemblyOf(analyzers);
}, 300_000);

afterAll(async () => {
  await endRun(procs, work, missing.length > 0 ? undefined : { database: dbName, prefix, env });
}, 120_000);

/** A description without the stop steps of a port only one shape has. */
function without(d: object | undefined, steps: string[]) {
  const { stopOrder, ...rest } = d as { stopOrder: string[] };
  return { ...rest, stopOrder: stopOrder.filter((s) => !steps.includes(s)) };
}

describe.skipIf(missing.length > 0)('one assembly per service: embedded = scale-out', () => {
  it('the analyzers service (scale-out only) runs its analysis on the main thread by default', () => {
    expect(logged.analyzers).toMatchObject({
      service: 'analyzers',
      workers: 0,
      stopOrder: ['lists-watch', 'http'],
    });
  });

  it('compiles the same pools, deadlines, batch sizes and stop order in both shapes', async () => {
    const config = await importVia<typeof import('@trawl/config')>(
      'services/all-in-one',
      '@trawl/config',
    );
    const { startEmbedded } = await importVia<
      typeof import('../../services/all-in-one/src/index.ts')
    >('services/mail-orchestrator', '@trawl/all-in-one');
    const { pino } = await importVia<{ pino: (o: { level: string }) => never }>(
      'services/all-in-one',
      'pino',
    );
    const cfg = config.loadConfig({
      env: {
        ...env,
        TRAWL_MAIL_ORCHESTRATOR_PORT: String(await freePort()),
      },
      envFile: false,
      rootDir: ROOT,
      needs: { postgres: false, rabbitmq: false, redis: false, secretKey: true },
    });
    const embedded = await startEmbedded(cfg, { port: 0, logger: pino({ level: 'silent' }) });
    try {
      const d = embedded.describe();
      expect(embedded.backends).toEqual({ store: 'postgres', broker: 'rabbitmq', cache: 'redis' });
      // the settings given reach both shapes, and the defaults are the same
      expect(d.orchestrator.consumer.prefetch).toBe(7);
      expect(d.orchestrator.consumer.shutdownGraceMs).toBe(4000);
      expect(d.orchestrator.analysis.workers).toBe(1);
      // Only the orchestrator's own /health and /metrics listener (embedded mode: one /metrics,
      // the gateway's) and the gateway's own plugin client (embedded mode: the orchestrator's
      // invoker) are parts of one shape.
      expect(without(d.orchestrator, [])).toEqual(without(logged.orchestrator, ['http']));
      expect(d.orchestrator.stopOrder).toEqual(
        ['report-notifier', 'consumer', 'invoker', 'analysis-pool'].filter(
          (s) => s !== 'report-notifier' || d.orchestrator.notifier,
        ),
      );
      expect(without(d.gateway, [])).toEqual(without(logged.gateway, ['plugin-client']));
      expect(d.mail?.submit).toBe('in-process');
      expect(logged.mail?.submit).toBe('http');
      expect({ ...d.mail, submit: 'http' }).toEqual(logged.mail);
      // the process stops its parts last-opened first: mail, gateway, orchestrator, then clients
      expect(d.stopOrder).toEqual([
        'mail-orchestrator',
        'api-gateway',
        'analyzer-orchestrator',
        'cache',
        'broker',
        'database',
      ]);
    } finally {
      await embedded.close();
    }
  });
});

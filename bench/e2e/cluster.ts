/**
 * A Trawl deployment on the local PostgreSQL, Redis and RabbitMQ, each service its own process
 * started from its src/main.ts with tsx (scale-out), or the all-in-one process (embedded mode on the
 * same servers). Isolated: its own database, its own Redis database number, its own broker prefix on
 * the vhost of the test URLs. `close()` stops every process and removes what it created.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { topology } from '@trawl/contracts';
import { createPgClient, createRabbitBroker, createRedisClient } from '@trawl/platform';
import { testUrls, uniqueSuffix } from '@trawl/platform/testing';
import { freePort } from '../support/free-port.ts';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export type ServiceKind = 'gateway' | 'analyzers' | 'orchestrator' | 'embedded';

interface ServiceProcess {
  name: string;
  kind: ServiceKind;
  child: ChildProcess;
  pid: number;
  port: number;
  logFile: string;
  exited: Promise<number | null>;
}

export interface ClusterOptions {
  mode: 'scale-out' | 'embedded';
  /** Orchestrator processes (scale-out only). */
  orchestrators?: number;
  /** Redis database number (isolation from other users of the server). */
  redisDb?: number;
  logLevel?: 'debug' | 'info' | 'warning' | 'error';
  configFile?: string;
  workflowsFile?: string;
  /** Extra variables for every process. */
  env?: Record<string, string>;
  /** Node flags for the orchestrators (e.g. ['--cpu-prof']). */
  nodeFlags?: Partial<Record<ServiceKind, string[]>>;
}

export interface Cluster {
  gatewayUrl: string;
  internalKey: string;
  prefix: string;
  database: string;
  databaseUrl: string;
  redisUrl: string;
  rabbitmqUrl: string;
  dir: string;
  services: ServiceProcess[];
  /** Starts one more orchestrator (scale-out). */
  addOrchestrator(): Promise<ServiceProcess>;
  /** Headers for gateway calls with the internal key. */
  headers(extra?: Record<string, string>): Record<string, string>;
  /** Last lines of a service's log (for failures). */
  tail(name: string, lines?: number): string;
  close(): Promise<void>;
}

const children = new Set<ChildProcess>();
function killAll(): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}
process.once('exit', killAll);

async function waitHttp(url: string, timeoutMs: number, child?: ChildProcess): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (child && (child.exitCode !== null || child.signalCode !== null))
      throw new Error(`process for ${url} exited (${child.exitCode ?? child.signalCode})`);
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await r.arrayBuffer();
      if (r.ok) return;
    } catch {
      // not up yet
    }
    if (Date.now() > until) throw new Error(`${url} did not answer in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.href;
}

function withRedisDb(url: string, db: number): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.href;
}

const SCRIPTS: Record<ServiceKind, string> = {
  gateway: 'services/api-gateway/src/main.ts',
  analyzers: 'services/analyzers/src/main.ts',
  orchestrator: 'services/analyzer-orchestrator/src/main.ts',
  embedded: 'bench/e2e/embedded-process.ts',
};

export async function startCluster(opts: ClusterOptions): Promise<Cluster> {
  const infra = testUrls();
  const suffix = uniqueSuffix();
  const prefix = `e2e-${suffix}`;
  const database = `trawl_e2e_${suffix}`;
  const dir = mkdtempSync(join(tmpdir(), 'trawl-e2e-'));
  const admin = createPgClient({ url: infra.databaseUrl, max: 1 });
  await admin.query(`CREATE DATABASE "${database}"`);
  await admin.close();
  const databaseUrl = withDatabase(infra.databaseUrl, database);
  const redisUrl = withRedisDb(infra.redisUrl, opts.redisDb ?? 14);
  const internalKey = randomBytes(32).toString('base64url');
  const gatewayPort = await freePort();
  const analyzersPort = await freePort();
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const baseEnv: Record<string, string> = {
    ...(process.env as Record<string, string>),
    APP_ENV: 'test',
    LOG_LEVEL: opts.logLevel ?? 'info',
    SECRET_KEY: randomBytes(48).toString('base64url'),
    INTERNAL_API_KEY: internalKey,
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    RABBITMQ_URL: infra.rabbitmqUrl,
    TRAWL_BROKER_PREFIX: prefix,
    TRAWL_HOST: '127.0.0.1',
    API_GATEWAY_PORT: String(gatewayPort),
    TRAWL_GATEWAY_URL: gatewayUrl,
    TRAWL_ANALYZERS_PORT: String(analyzersPort),
    TRAWL_DATA_DIR: join(dir, 'data'),
    ...(opts.configFile ? { TRAWL_CONFIG_FILE: opts.configFile } : {}),
    ...(opts.workflowsFile ? { TRAWL_WORKFLOWS_FILE: opts.workflowsFile } : {}),
    ...(opts.env ?? {}),
  };
  const services: ServiceProcess[] = [];
  let orchCount = 0;

  function launch(kind: ServiceKind, name: string, port: number, env: Record<string, string>) {
    const logFile = join(dir, `${name}.log`);
    const out = createWriteStream(logFile);
    const flags = opts.nodeFlags?.[kind] ?? [];
    const child = spawn(process.execPath, [...flags, '--import', 'tsx', SCRIPTS[kind]], {
      cwd: ROOT,
      env: { ...baseEnv, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.pipe(out);
    child.stderr?.pipe(out);
    children.add(child);
    const exited = new Promise<number | null>((r) =>
      child.once('exit', (c) => {
        children.delete(child);
        r(c);
      }),
    );
    const sp: ServiceProcess = {
      name,
      kind,
      child,
      pid: child.pid as number,
      port,
      logFile,
      exited,
    };
    services.push(sp);
    return sp;
  }

  const tail = (name: string, lines = 30): string => {
    const s = services.find((x) => x.name === name);
    if (!s) return '';
    try {
      return readFileSync(s.logFile, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  };

  async function addOrchestrator(): Promise<ServiceProcess> {
    orchCount += 1;
    const name = `orchestrator-${orchCount}`;
    const port = await freePort();
    const sp = launch('orchestrator', name, port, {
      TRAWL_ORCHESTRATOR_PORT: String(port),
    });
    try {
      await waitHttp(`http://127.0.0.1:${port}/health`, 60_000, sp.child);
    } catch (e) {
      throw new Error(`${(e as Error).message}\n${tail(sp.name)}`);
    }
    return sp;
  }

  const cluster: Cluster = {
    gatewayUrl,
    internalKey,
    prefix,
    database,
    databaseUrl,
    redisUrl,
    rabbitmqUrl: infra.rabbitmqUrl,
    dir,
    services,
    addOrchestrator,
    headers: (extra = {}) => ({ 'x-internal-api-key': internalKey, ...extra }),
    tail,
    close: async () => {
      for (const s of services) {
        if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGTERM');
      }
      await Promise.race([
        Promise.all(services.map((s) => s.exited)),
        new Promise((r) => setTimeout(r, 15_000)),
      ]);
      for (const s of services) {
        if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
      }
      await Promise.all(services.map((s) => s.exited));
      await removeResources({ infra, database, prefix, redisUrl });
      rmSync(dir, { recursive: true, force: true });
    },
  };

  try {
    if (opts.mode === 'embedded') {
      const sp = launch('embedded', 'all-in-one', gatewayPort, {});
      await waitHttp(`${gatewayUrl}/health`, 90_000, sp.child);
    } else {
      // The gateway first (it migrates the database and serves the analyzers their settings).
      const gw = launch('gateway', 'gateway', gatewayPort, {});
      await waitHttp(`${gatewayUrl}/health`, 90_000, gw.child);
      const an = launch('analyzers', 'analyzers', analyzersPort, {});
      await waitHttp(`http://127.0.0.1:${analyzersPort}/health`, 90_000, an.child);
      const n = opts.orchestrators ?? 1;
      await Promise.all(Array.from({ length: n }, () => addOrchestrator()));
    }
  } catch (e) {
    const logs = services.map((s) => `--- ${s.name}\n${tail(s.name)}`).join('\n');
    await cluster.close().catch(() => {});
    throw new Error(`${(e as Error).message}\n${logs}`);
  }
  return cluster;
}

/** Drops the database, the broker queues and exchanges of the prefix, and the cache keys. */
async function removeResources(r: {
  infra: ReturnType<typeof testUrls>;
  database: string;
  prefix: string;
  redisUrl: string;
}): Promise<void> {
  const admin = createPgClient({ url: r.infra.databaseUrl, max: 1 });
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${r.database}" WITH (FORCE)`);
  } catch (e) {
    process.stderr.write(`e2e: could not drop ${r.database}: ${(e as Error).message}\n`);
  } finally {
    await admin.close();
  }
  const broker = createRabbitBroker({
    url: r.infra.rabbitmqUrl,
    connectionName: `${r.prefix}-cleanup`,
  });
  try {
    const t = topology(r.prefix);
    for (const q of Object.values(t.queues)) await broker.deleteQueue(q).catch(() => {});
    for (const x of Object.values(t.exchanges)) await broker.deleteExchange(x).catch(() => {});
  } finally {
    await broker.close().catch(() => {});
  }
  const redis = createRedisClient(r.redisUrl);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', 'trawl:*', 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } catch {
    // Redis may be down (chaos test); its keys expire or stay in this test database number.
  } finally {
    redis.disconnect();
  }
}

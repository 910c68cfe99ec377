/**
 * Trawl across four "hosts" (network namespaces, ./netns.ts): h1, h2 and h3 each run a node of one
 * RabbitMQ cluster (Debian's rabbitmq-server, a node name and data folder of its own) and an
 * analyzer orchestrator; h1 and h2 run a gateway too; h4 runs a private PostgreSQL (initdb into a
 * temporary folder) and a private Redis. Every server listens inside its namespace only: nothing
 * here touches the machine's own PostgreSQL, Redis or RabbitMQ. Each Trawl service uses the
 * RabbitMQ node of its own host, as a pod would use the node its Service routes it to.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  chownSync,
  createWriteStream,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPgClient } from '@trawl/platform';
import { ROOT } from '../e2e-run/helpers.ts';
import { cleanupHosts, type Host, inHost, killAllIn, makeHosts, pidsIn, runIn } from './netns.ts';

/** Debian's PostgreSQL binaries, of the newest version installed. */
const PG_BIN = (() => {
  try {
    const versions = readdirSync('/usr/lib/postgresql')
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    return `/usr/lib/postgresql/${versions[0] ?? '15'}/bin`;
  } catch {
    return '/usr/lib/postgresql/15/bin';
  }
})();
const RABBIT_USER = 'trawl';
export const BROKER_PREFIX = 'hosts';
const GATEWAY_PORT = 8001;
const ORCHESTRATOR_PORT = 8091;

type Role = 'gateway' | 'orchestrator';

const ENTRY: Record<Role, string> = {
  gateway: 'services/api-gateway/src/main.ts',
  orchestrator: 'services/analyzer-orchestrator/src/main.ts',
};

/** uid and gid of a system user (postgres, rabbitmq, redis). */
function ids(user: string): { uid: number; gid: number } {
  const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

function ownedDir(path: string, user: string): string {
  mkdirSync(path, { recursive: true });
  const { uid, gid } = ids(user);
  chownSync(path, uid, gid);
  return path;
}

/** True when this machine has what the test needs besides root (the Debian packages). */
export function hostToolsPresent(): boolean {
  try {
    for (const user of ['postgres', 'rabbitmq', 'redis']) ids(user);
    execFileSync('test', ['-x', `${PG_BIN}/initdb`]);
    execFileSync('test', ['-x', '/usr/sbin/rabbitmq-server']);
    execFileSync('test', ['-x', '/usr/bin/redis-server']);
    return true;
  } catch {
    return false;
  }
}

async function until(what: string, ms: number, check: () => Promise<boolean> | boolean) {
  const end = Date.now() + ms;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not yet
    }
    if (Date.now() > end) throw new Error(`${what} not ready after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function httpOk(url: string, timeoutMs = 1500): Promise<boolean> {
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await r.arrayBuffer();
    return r.ok;
  } catch {
    return false;
  }
}

export interface HostCluster {
  hosts: Host[];
  /** The hosts with a RabbitMQ node and an orchestrator. */
  brokerHosts: Host[];
  dataHost: Host;
  gatewayUrls: string[];
  internalKey: string;
  databaseUrl: string;
  /** The AMQP URL of a host's RabbitMQ node. */
  rabbitUrl(h: Host): string;
  /** Starts a host's RabbitMQ node (it rejoins the cluster with its data) and Trawl services. */
  startHost(h: Host): Promise<void>;
  /** SIGKILLs every process of a host (its RabbitMQ node and Trawl services). */
  killHost(h: Host): void;
  /** The processes of every host by what they are (gateway, orchestrator, rabbitmq, postgres, redis). */
  processGroups(): Record<string, number[]>;
  /**
   * Jobs an orchestrator ran to the end after another run had finished them (its result dropped:
   * the store keeps one), read from the orchestrators' logs.
   */
  droppedResults(): Set<string>;
  /** The last lines of a host's logs. */
  logs(h: Host, lines?: number): string;
  close(): Promise<void>;
}

/** Prints how long each step took (the start-up's share of the test's time). */
function stepTimer(): (step: string) => void {
  let last = Date.now();
  return (step) => {
    const now = Date.now();
    process.stdout.write(`hosts: ${step} in ${((now - last) / 1000).toFixed(1)} s\n`);
    last = now;
  };
}

export async function startHostCluster(): Promise<HostCluster> {
  const step = stepTimer();
  const hosts = makeHosts(4);
  const [h1, h2, h3, h4] = hosts as [Host, Host, Host, Host];
  const brokerHosts = [h1, h2, h3];
  const dir = mkdtempSync(join(tmpdir(), 'trawl-hosts-'));
  chmodSync(dir, 0o755);
  const children = new Set<ChildProcess>();
  const logFiles = new Map<string, string[]>();
  const rabbitPass = randomBytes(18).toString('base64url');
  const internalKey = randomBytes(32).toString('base64url');
  const secretKey = randomBytes(48).toString('base64url');
  const databaseUrl = `postgres://postgres@${h4.address}:5432/trawl`;

  function launch(h: Host, name: string, argv: string[], env: NodeJS.ProcessEnv = process.env) {
    const logFile = join(dir, `${h.name}-${name}.log`);
    logFiles.set(h.name, [...(logFiles.get(h.name) ?? []), logFile]);
    const out = createWriteStream(logFile, { flags: 'a' });
    const [cmd, ...args] = inHost(h, argv);
    const child = spawn(cmd as string, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.pipe(out);
    child.stderr?.pipe(out);
    children.add(child);
    child.once('exit', () => children.delete(child));
    return child;
  }

  // ---------------------------------------------------------------- RabbitMQ, one node per host
  const emptyEnv = join(dir, 'rabbitmq-env.conf');
  writeFileSync(emptyEnv, '');
  const rabbitConf = join(dir, 'rabbitmq.conf');
  writeFileSync(
    rabbitConf,
    [
      'listeners.tcp.default = 5672',
      // A node cut off from the majority stops serving (docs/adr/019-past-one-host.md).
      'cluster_partition_handling = pause_minority',
      // A lost node is noticed in 10-15 s (the Kubernetes component sets 15).
      'net_ticktime = 10',
      `default_user = ${RABBIT_USER}`,
      `default_pass = ${rabbitPass}`,
      'loopback_users = none',
      '',
    ].join('\n'),
  );
  const plugins = join(dir, 'enabled_plugins');
  writeFileSync(plugins, '[].\n');
  chmodSync(rabbitConf, 0o644);
  // Erlang distribution between namespaces: the machine's rabbitmq-env.conf pins epmd and the
  // distribution to 127.0.0.1, hence an empty env file of our own and ERL_EPMD_ADDRESS unset.
  const rabbitEnv = (h: Host) => [
    'env',
    '-u',
    'ERL_EPMD_ADDRESS',
    `RABBITMQ_CONF_ENV_FILE=${emptyEnv}`,
    'RABBITMQ_USE_LONGNAME=true',
    `RABBITMQ_NODENAME=rabbit@${h.fqdn}`,
    `RABBITMQ_MNESIA_BASE=${join(dir, h.name, 'mnesia')}`,
    `RABBITMQ_LOG_BASE=${join(dir, h.name, 'log')}`,
    `RABBITMQ_CONFIG_FILE=${rabbitConf}`,
    `RABBITMQ_ENABLED_PLUGINS_FILE=${plugins}`,
  ];
  const ctl = (h: Host, ...args: string[]) =>
    runIn(h, [...rabbitEnv(h), 'rabbitmqctl', '-q', '-n', `rabbit@${h.fqdn}`, ...args], 180_000);
  function startRabbit(h: Host) {
    ownedDir(join(dir, h.name), 'rabbitmq');
    ownedDir(join(dir, h.name, 'mnesia'), 'rabbitmq');
    ownedDir(join(dir, h.name, 'log'), 'rabbitmq');
    launch(h, 'rabbitmq', [...rabbitEnv(h), 'rabbitmq-server']);
  }
  async function rabbitUp(h: Host) {
    await until(`RabbitMQ on ${h.name}`, 180_000, async () => {
      await ctl(h, 'ping');
      return true;
    });
    await ctl(h, 'await_startup', '--timeout', '180');
  }

  // ---------------------------------------------------------------- Trawl services
  // The shipped workflows with each analyzer call given 30 s instead of 2-5 s: this test is about
  // hosts, and on a starved machine (CI shares 2 cores) a healthy analyzer can miss a 5 s timeout
  // and fail its job (docs/reliability.md, "Analyzer that never answers"), which is not a fault of
  // the hosts.
  const workflowsFile = join(dir, 'workflows.yaml');
  writeFileSync(
    workflowsFile,
    readFileSync(join(ROOT, 'config/defaults/workflows.yaml'), 'utf8').replace(
      /(\{ id: [a-z_]+,[^}\n]*timeout_ms: )\d+/g,
      '$130000',
    ),
  );
  const rabbitUrl = (h: Host) =>
    `amqp://${RABBIT_USER}:${encodeURIComponent(rabbitPass)}@${h.address}:5672/%2f`;
  const serviceEnv = (h: Host, role: Role): NodeJS.ProcessEnv => ({
    ...process.env,
    APP_ENV: 'test',
    // The orchestrators at info: a run whose result was dropped because the job was finished
    // meanwhile says so (counted as a job run twice).
    LOG_LEVEL: role === 'orchestrator' ? 'info' : 'warning',
    TRAWL_ENV_FILE: 'none',
    SECRET_KEY: secretKey,
    INTERNAL_API_KEY: internalKey,
    DATABASE_URL: databaseUrl,
    REDIS_URL: `redis://${h4.address}:6379/0`,
    RABBITMQ_URL: rabbitUrl(h),
    TRAWL_BROKER_PREFIX: BROKER_PREFIX,
    TRAWL_HOST: h.address,
    // each service's own listen address (127.0.0.1 unless set): the orchestrator's /health is read
    // from the test's namespace
    TRAWL_ORCHESTRATOR_HOST: h.address,
    API_GATEWAY_PORT: String(GATEWAY_PORT),
    TRAWL_ORCHESTRATOR_PORT: String(ORCHESTRATOR_PORT),
    TRUSTED_HOSTS: hosts.map((x) => x.address).join(','),
    TRAWL_DATA_DIR: join(dir, h.name, 'data'),
    TRAWL_WORKFLOWS_FILE: workflowsFile,
    TRAWL_ORCHESTRATOR_SHUTDOWN_GRACE_MS: '2000',
    TRAWL_REAPER_INTERVAL_MS: '5000',
  });
  const roles = (h: Host): Role[] => (h === h3 ? ['orchestrator'] : ['gateway', 'orchestrator']);
  async function startService(h: Host, role: Role) {
    const child = launch(h, role, ['node', '--import', 'tsx', ENTRY[role]], serviceEnv(h, role));
    const port = role === 'gateway' ? GATEWAY_PORT : ORCHESTRATOR_PORT;
    await until(`${role} on ${h.name}`, 120_000, async () => {
      if (child.exitCode !== null) throw new Error(`${role} on ${h.name} exited`);
      return httpOk(`http://${h.address}:${port}/health`);
    });
  }

  const cluster: HostCluster = {
    hosts,
    brokerHosts,
    dataHost: h4,
    gatewayUrls: [h1, h2].map((h) => `http://${h.address}:${GATEWAY_PORT}`),
    internalKey,
    databaseUrl,
    rabbitUrl,
    async startHost(h) {
      const back = stepTimer();
      startRabbit(h);
      await rabbitUp(h);
      back(`${h.name}: RabbitMQ node back in the cluster`);
      await Promise.all(roles(h).map((role) => startService(h, role)));
      back(`${h.name}: ${roles(h).join(' and ')} up`);
    },
    killHost(h) {
      killAllIn(h.ns);
    },
    processGroups() {
      const groups: Record<string, number[]> = {
        gateway: [],
        orchestrator: [],
        rabbitmq: [],
        postgres: [],
        redis: [],
      };
      for (const h of hosts) {
        for (const pid of pidsIn(h.ns)) {
          let comm = '';
          let cmdline = '';
          try {
            comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
            cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
          } catch {
            continue;
          }
          if (comm === 'beam.smp') groups.rabbitmq?.push(pid);
          else if (comm === 'postgres') groups.postgres?.push(pid);
          else if (comm === 'redis-server') groups.redis?.push(pid);
          else if (cmdline.includes(ENTRY.gateway)) groups.gateway?.push(pid);
          else if (cmdline.includes(ENTRY.orchestrator)) groups.orchestrator?.push(pid);
        }
      }
      return groups;
    },
    droppedResults() {
      const out = new Set<string>();
      for (const files of logFiles.values()) {
        for (const f of files.filter((x) => x.endsWith('-orchestrator.log'))) {
          let text = '';
          try {
            text = readFileSync(f, 'utf8');
          } catch {
            continue;
          }
          for (const line of text.split('\n')) {
            if (!line.includes('job finished elsewhere meanwhile')) continue;
            try {
              const id = (JSON.parse(line) as { job_id?: string }).job_id;
              if (id) out.add(id);
            } catch {
              // a line cut by a SIGKILL
            }
          }
        }
      }
      return out;
    },
    logs(h, lines = 40) {
      return (logFiles.get(h.name) ?? [])
        .map((f) => {
          try {
            return `--- ${f}\n${readFileSync(f, 'utf8').split('\n').slice(-lines).join('\n')}`;
          } catch {
            return '';
          }
        })
        .join('\n');
    },
    async close() {
      for (const h of hosts) killAllIn(h.ns);
      for (const c of children) c.kill('SIGKILL');
      cleanupHosts();
      rmSync(dir, { recursive: true, force: true });
    },
  };

  try {
    // ------------------------------------------------------------ h4: PostgreSQL and Redis
    const pgData = ownedDir(join(dir, 'pg'), 'postgres');
    const pgSock = ownedDir(join(dir, 'pgsock'), 'postgres');
    execFileSync(
      'runuser',
      [
        '-u',
        'postgres',
        '--',
        `${PG_BIN}/initdb`,
        '-D',
        pgData,
        '-U',
        'postgres',
        '--auth=trust',
        '-E',
        'UTF8',
        '--no-sync',
      ],
      { stdio: 'ignore', timeout: 120_000 },
    );
    appendFileSync(join(pgData, 'pg_hba.conf'), `host all all 198.18.33.0/24 trust\n`);
    launch(h4, 'postgres', [
      'runuser',
      '-u',
      'postgres',
      '--',
      `${PG_BIN}/postgres`,
      '-D',
      pgData,
      '-c',
      `listen_addresses=${h4.address}`,
      '-c',
      'port=5432',
      '-c',
      `unix_socket_directories=${pgSock}`,
      '-c',
      'max_connections=200',
    ]);
    const redisDir = ownedDir(join(dir, 'redis'), 'redis');
    launch(h4, 'redis', [
      'runuser',
      '-u',
      'redis',
      '--',
      'redis-server',
      '--bind',
      h4.address,
      '--port',
      '6379',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      redisDir,
      '--protected-mode',
      'no',
    ]);
    // ------------------------------------------------------------ the RabbitMQ cluster
    for (const h of brokerHosts) startRabbit(h);
    await until('PostgreSQL on h4', 120_000, async () => {
      const admin = createPgClient({
        url: `postgres://postgres@${h4.address}:5432/postgres`,
        max: 1,
      });
      try {
        await admin.query('CREATE DATABASE trawl');
        return true;
      } finally {
        await admin.close();
      }
    });
    step('PostgreSQL and Redis on h4');
    for (const h of brokerHosts) await rabbitUp(h);
    step('3 RabbitMQ nodes started');
    // h2, then h3, join h1: one at a time, as RabbitMQ asks (two joins at once raced in Mnesia:
    // h3's start_app after its join failed with `mnesia_app` in a loaded CI run).
    for (const h of [h2, h3]) {
      await ctl(h, 'stop_app');
      await ctl(h, 'join_cluster', `rabbit@${h1.fqdn}`);
      await ctl(h, 'start_app');
      await ctl(h, 'await_startup', '--timeout', '180');
    }
    step('RabbitMQ cluster of 3 formed');
    // ------------------------------------------------------------ Trawl: the gateway on h1 first
    // (it migrates the database), then the others.
    await startService(h1, 'gateway');
    step('first gateway up (database migrated)');
    await Promise.all([
      startService(h2, 'gateway'),
      ...brokerHosts.map((h) => startService(h, 'orchestrator')),
    ]);
    step('2 gateways and 3 orchestrators up');
  } catch (e) {
    const logs = hosts.map((h) => cluster.logs(h, 20)).join('\n');
    await cluster.close();
    throw new Error(`${(e as Error).message}\n${logs}`);
  }
  return cluster;
}

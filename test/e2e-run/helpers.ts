import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { corpusDir } from '@trawl/config';

/** The repository this test runs in. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Root-level tests see only the root's dependencies: workspace packages and their dependencies are
 * imported through a package that depends on them (its node_modules), never by a src/ path.
 */
export async function importVia<T>(fromPackage: string, name: string): Promise<T> {
  const req = createRequire(join(ROOT, fromPackage, 'package.json'));
  return (await import(pathToFileURL(req.resolve(name)).href)) as T;
}

export { freePort } from '../../bench/support/free-port.ts';

/** The first phishing .eml of the corpus (read by the server's parser only; never opened here). */
export function corpusPhishing(root = ROOT): string | null {
  const c = corpusDir(root);
  if (!c) return null;
  for (const sub of ['phishing', '.']) {
    const d = join(c, sub);
    if (!existsSync(d)) continue;
    const f = readdirSync(d)
      .filter((n) => n.endsWith('.eml'))
      .sort()[0];
    if (f) return join(d, f);
  }
  return null;
}

/** A small synthetic phishing message for when the corpus is absent. */
export const SYNTHETIC_EML = [
  'From: "PayPal Security" <security@paypa1-account-verify.example>',
  'To: victim@example.org',
  'Subject: Urgent: your account will be suspended',
  'Date: Mon, 06 Jan 2025 10:00:00 +0000',
  'Message-ID: <synthetic-1@paypa1-account-verify.example>',
  'MIME-Version: 1.0',
  'Content-Type: text/plain; charset=utf-8',
  '',
  'Dear customer, we detected unusual activity. Verify your password within 24 hours or your',
  'account will be suspended: http://paypa1-account-verify.example/login',
  '',
].join('\r\n');

/** A child process whose output is collected; stop() sends a signal and waits for the exit. */
export interface Proc {
  child: ChildProcess;
  out(): string;
  waitFor(re: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | null>;
}

export function startProc(
  cmd: string,
  args: string[],
  o: { cwd: string; env: Record<string, string | undefined>; detached?: boolean },
): Proc {
  const child = spawn(cmd, args, {
    cwd: o.cwd,
    env: o.env as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: o.detached ?? false,
  });
  // A detached child leads its own process group: signals go to the whole tree (pnpm → tsx → node).
  const signal = (s: NodeJS.Signals) => {
    if (o.detached && child.pid) {
      try {
        process.kill(-child.pid, s);
        return;
      } catch {
        // the group is gone
      }
    }
    child.kill(s);
  };
  let buf = '';
  child.stdout?.on('data', (d: Buffer) => {
    buf += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    buf += d.toString();
  });
  // 'close': every process holding the output pipes has exited (pnpm's children included).
  let isClosed = false;
  const closed = new Promise<number | null>((r) =>
    child.once('close', (c) => {
      isClosed = true;
      r(c);
    }),
  );
  return {
    child,
    out: () => buf,
    waitFor(re, timeoutMs) {
      return new Promise((ok, fail) => {
        const started = Date.now();
        const tick = () => {
          const m = buf.match(re);
          if (m) return ok(m);
          if (child.exitCode !== null || child.signalCode !== null)
            return fail(
              new Error(`process exited (${child.exitCode}) before ${re}:\n${buf.slice(-4000)}`),
            );
          if (Date.now() - started > timeoutMs)
            return fail(new Error(`timed out waiting for ${re}:\n${buf.slice(-4000)}`));
          setTimeout(tick, 100);
        };
        tick();
      });
    },
    async stop(sig = 'SIGTERM', timeoutMs = 30_000) {
      if (child.pid === undefined || isClosed) return child.exitCode;
      signal(sig);
      const t = setTimeout(() => signal('SIGKILL'), timeoutMs);
      const code = await closed;
      clearTimeout(t);
      return code;
    },
  };
}

/** Runs a command to its end; answers its exit code and output. */
export function runCmd(
  cmd: string,
  args: string[],
  o: { cwd: string; env: Record<string, string | undefined>; input?: string; timeoutMs?: number },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((ok, fail) => {
    const child = spawn(cmd, args, { cwd: o.cwd, env: o.env as NodeJS.ProcessEnv });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const t = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`${cmd} ${args.join(' ')} timed out\n${stdout}\n${stderr}`));
    }, o.timeoutMs ?? 120_000);
    child.on('error', (e) => {
      clearTimeout(t);
      fail(e);
    });
    child.on('exit', (code) => {
      clearTimeout(t);
      ok({ code, stdout, stderr });
    });
    child.stdin.end(o.input ?? '');
  });
}

/**
 * Clones the committed HEAD of this repository into `dir` and installs its dependencies offline from
 * the store. With TRAWL_E2E_WORKTREE=1 the uncommitted changes and untracked files of the working
 * tree are laid over the clone (for developers whose neighbours have not committed yet).
 */
export async function cloneAndInstall(dir: string, env: Record<string, string | undefined>) {
  const git = await runCmd('git', ['clone', '--quiet', '--no-hardlinks', ROOT, dir], {
    cwd: ROOT,
    env,
  });
  if (git.code !== 0) throw new Error(`git clone failed: ${git.stderr}`);
  if (env.TRAWL_E2E_WORKTREE === '1') {
    const diff = await runCmd('git', ['diff', 'HEAD', '--binary'], { cwd: ROOT, env });
    if (diff.stdout.trim() !== '') {
      const apply = await runCmd('git', ['apply', '--whitespace=nowarn', '-'], {
        cwd: dir,
        env,
        input: diff.stdout,
      });
      if (apply.code !== 0) throw new Error(`git apply failed: ${apply.stderr}`);
    }
    const others = await runCmd('git', ['ls-files', '--others', '--exclude-standard', '-z'], {
      cwd: ROOT,
      env,
    });
    const { cpSync, mkdirSync } = await import('node:fs');
    for (const f of others.stdout.split('\0').filter(Boolean)) {
      mkdirSync(dirname(join(dir, f)), { recursive: true });
      cpSync(join(ROOT, f), join(dir, f));
    }
  }
  // The store of this machine (a fresh HOME would point pnpm at an empty one).
  const store = (
    await runCmd('pnpm', ['store', 'path'], { cwd: ROOT, env: process.env })
  ).stdout.trim();
  const install = await runCmd(
    'pnpm',
    ['install', '--offline', '--frozen-lockfile', ...(store ? ['--store-dir', store] : [])],
    {
      cwd: dir,
      env,
      timeoutMs: 240_000,
    },
  );
  if (install.code !== 0)
    throw new Error(
      `pnpm install failed:\n${install.stdout.slice(-3000)}\n${install.stderr.slice(-3000)}`,
    );
}

const PG_ADMIN = ['-h', '127.0.0.1', '-U', 'postgres', '-v', 'ON_ERROR_STOP=1'];

/** Creates the database of a run of services (they migrate it themselves). */
export async function createRunDatabase(name: string): Promise<void> {
  const r = await runCmd('psql', [...PG_ADMIN, '-c', `CREATE DATABASE ${name}`], {
    cwd: ROOT,
    env: process.env,
  });
  if (r.code !== 0) throw new Error(r.stderr);
}

/**
 * Removes what a run of services left on the shared servers: its database, its broker names
 * (TRAWL_BROKER_PREFIX on the vhost of `rabbitmqUrl`), its cache keys (`trawl:*` in the Redis
 * database of `redisUrl`, one the run had to itself).
 */
async function dropRunResources(o: {
  database: string;
  prefix: string;
  rabbitmqUrl: string;
  redisUrl: string;
}): Promise<void> {
  await runCmd('psql', [...PG_ADMIN, '-c', `DROP DATABASE IF EXISTS ${o.database} WITH (FORCE)`], {
    cwd: ROOT,
    env: process.env,
  });
  const platform = await importVia<typeof import('@trawl/platform')>(
    'services/all-in-one',
    '@trawl/platform',
  );
  const contracts = await import('@trawl/contracts');
  const broker = await platform.createRabbitBroker({ url: o.rabbitmqUrl });
  const names = platform.topologyNames(contracts.topology(o.prefix));
  for (const q of names.queues) await broker.deleteQueue(q).catch(() => {});
  for (const x of names.exchanges) await broker.deleteExchange(x).catch(() => {});
  await broker.close();
  const redis = platform.createRedisClient(o.redisUrl);
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', 'trawl:*', 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
  await redis.quit();
}

/**
 * The end of a run of services: each process stopped (last started first), then, when `run` is
 * given, its resources (its database, and the broker names and cache of its RABBITMQ_URL and
 * REDIS_URL), then its folder.
 */
export async function endRun(
  procs: Proc[],
  work: string,
  run?: { database: string; prefix: string; env: Record<string, string | undefined> },
): Promise<void> {
  for (const p of [...procs].reverse()) await p.stop('SIGTERM', 20_000);
  if (run) {
    await dropRunResources({
      database: run.database,
      prefix: run.prefix,
      rabbitmqUrl: String(run.env.RABBITMQ_URL),
      redisUrl: String(run.env.REDIS_URL),
    });
  }
  rmSync(work, { recursive: true, force: true });
}

import { execFileSync, spawn } from 'node:child_process';
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Rspamd as the benches' anchor (issue 29), started by the bench itself: Debian's `rspamd` (3.4),
 * with the system configuration (/etc/rspamd) and a temporary LOCAL_CONFDIR of its own that
 *  - listens on loopback only: the proxy worker in milter mode with `self_scan = yes` on
 *    127.0.0.1:11332 (Postfix: `smtpd_milters = inet:127.0.0.1:11332`, `milter_protocol = 6`),
 *    the normal worker on 127.0.0.1:11333 (HTTP `/checkv2`), the controller on 11334 (the next
 *    free ports when these are taken);
 *  - switches off every module that asks the network or needs Redis (RBLs, SURBL, SPF, DKIM,
 *    DMARC, ARC, fuzzy, phishing feeds, ASN, greylisting, ratelimit, neural, reputation...): what
 *    remains is its local rules (regexp, MIME, header and URL checks), an untrained Rspamd.
 * Its compiled Hyperscan cache is kept in the system temp folder between runs (the first start
 * compiles it: about a minute on two cores). Used by `pnpm bench:smtp` and `pnpm bench:e2e`.
 */

interface Rspamd {
  milter: { host: '127.0.0.1'; port: number };
  /** The normal worker: POST /checkv2 with the raw message. */
  checkUrl: string;
  /** CPU seconds used so far by all its processes (main and workers). */
  cpuSeconds(): number;
  stop(): Promise<void>;
}

export type RspamdStart = { ok: true; rspamd: Rspamd } | { ok: false; why: string };

const RSPAMD = '/usr/bin/rspamd';
const HZ = 100;
/** Modules that ask DNS or other servers, or need Redis. */
const NETWORK_MODULES = [
  'antivirus',
  'arc',
  'asn',
  'clickhouse',
  'dcc',
  'dkim',
  'dkim_signing',
  'arc_signing',
  'dmarc',
  'elastic',
  'emails',
  'external_services',
  'fuzzy_check',
  'greylist',
  'hfilter',
  'history_redis',
  'maillist',
  'metadata_exporter',
  'multimap',
  'mx_check',
  'neural',
  'phishing',
  'ratelimit',
  'rbl',
  'replies',
  'reputation',
  'rspamd_update',
  'spamassassin',
  'spf',
  'url_redirector',
  'url_reputation',
  'whitelist',
];

/** The configuration this starter expects (printed when Rspamd cannot be started). */
export const RSPAMD_EXPECTED =
  'Debian rspamd 3.4 at /usr/bin/rspamd, run as root (it drops to _rspamd): proxy worker milter = yes, self_scan = yes on 127.0.0.1:11332; normal worker on 127.0.0.1:11333; network modules off';

async function portFree(port: number): Promise<boolean> {
  const s = createServer();
  return new Promise((resolve) => {
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

async function pickPort(preferred: number, taken: number[]): Promise<number> {
  for (let p = preferred; p < preferred + 200; p++) {
    if (!taken.includes(p) && (await portFree(p))) return p;
  }
  throw new Error(`no free port from ${preferred}`);
}

const answers = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect(port, '127.0.0.1', () => {
      s.end();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });

function cpuOfTree(root: number): number {
  let ticks = 0;
  try {
    for (const line of execFileSync('ps', ['-o', 'pid=,ppid=', '-e'], { encoding: 'utf8' }).split(
      '\n',
    )) {
      const [pid, ppid] = line.trim().split(/\s+/).map(Number);
      if (pid !== root && ppid !== root) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]);
    }
  } catch {
    // a worker gone between the listing and the read
  }
  return ticks / HZ;
}

/** Starts an Rspamd of the bench's own; `{ok: false, why}` when it is absent or does not start. */
export async function startRspamd(o: { startTimeoutMs?: number } = {}): Promise<RspamdStart> {
  if (!existsSync(RSPAMD)) return { ok: false, why: `${RSPAMD} is not installed` };
  if (process.getuid?.() !== 0)
    return { ok: false, why: 'Rspamd is started as root (it drops to _rspamd)' };
  const dir = mkdtempSync(join(tmpdir(), 'trawl-bench-rspamd-'));
  const db = join(tmpdir(), 'trawl-bench-rspamd-db');
  for (const d of [
    join(dir, 'local.d'),
    join(dir, 'override.d'),
    join(dir, 'run'),
    join(dir, 'log'),
    db,
  ]) {
    mkdirSync(d, { recursive: true });
  }
  const milterPort = await pickPort(11332, []);
  const normalPort = await pickPort(11333, [milterPort]);
  const controllerPort = await pickPort(11334, [milterPort, normalPort]);
  const write = (f: string, text: string) => writeFileSync(join(dir, f), `${text}\n`);
  write(
    'override.d/worker-proxy.inc',
    [
      `bind_socket = "127.0.0.1:${milterPort}";`,
      'milter = yes;',
      'timeout = 120s;',
      'count = 1;',
      'upstream "local" { default = yes; self_scan = yes; }',
      'self_scan = yes;',
    ].join('\n'),
  );
  write('override.d/worker-normal.inc', `bind_socket = "127.0.0.1:${normalPort}"; count = 1;`);
  write(
    'override.d/worker-controller.inc',
    `bind_socket = "127.0.0.1:${controllerPort}"; count = 1;`,
  );
  write('override.d/worker-fuzzy.inc', 'enabled = false;');
  write(
    'override.d/logging.inc',
    `type = "file"; filename = "${join(dir, 'log', 'rspamd.log')}"; level = "warning";`,
  );
  for (const m of NETWORK_MODULES) write(`local.d/${m}.conf`, 'enabled = false;');
  // nothing refused or held: every message goes on (tagged), as Trawl's bench policy delivers
  write(
    'local.d/actions.conf',
    'reject = null; greylist = null; rewrite_subject = null; add_header = 6;',
  );
  // a resolver nobody answers on loopback would only add timeouts: no module above asks it
  write('local.d/options.inc', 'dns { timeout = 1s; retransmits = 1; }');
  for (const d of [dir, join(dir, 'run'), join(dir, 'log'), db])
    chownSync(d, uidOf('_rspamd'), gidOf('_rspamd'));
  const child = spawn(
    RSPAMD,
    [
      '-f',
      '-c',
      '/etc/rspamd/rspamd.conf',
      '-u',
      '_rspamd',
      '-g',
      '_rspamd',
      '--var',
      `LOCAL_CONFDIR=${dir}`,
      '--var',
      `DBDIR=${db}`,
      '--var',
      `RUNDIR=${join(dir, 'run')}`,
      '--var',
      `LOGDIR=${join(dir, 'log')}`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], cwd: dir },
  );
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    if (stderr.length < 8192) stderr += c.toString();
  });
  let exited = false;
  child.on('exit', () => {
    exited = true;
  });
  const stop = async () => {
    if (!exited) {
      child.kill('SIGTERM');
      await new Promise((r) => {
        const t = setTimeout(() => {
          child.kill('SIGKILL');
          r(undefined);
        }, 10_000);
        child.once('exit', () => {
          clearTimeout(t);
          r(undefined);
        });
      });
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const until = Date.now() + (o.startTimeoutMs ?? 240_000);
  while (!((await answers(milterPort)) && (await answers(normalPort)))) {
    if (exited || Date.now() > until) {
      await stop();
      return {
        ok: false,
        why: `Rspamd did not start (${exited ? 'it exited' : 'timeout'}): ${stderr.slice(-600).trim()}`,
      };
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  const pid = child.pid ?? 0;
  return {
    ok: true,
    rspamd: {
      milter: { host: '127.0.0.1', port: milterPort },
      checkUrl: `http://127.0.0.1:${normalPort}/checkv2`,
      cpuSeconds: () => cpuOfTree(pid),
      stop,
    },
  };
}

/** The uid, or the primary group id, of a user (`_rspamd`). */
function idOf(flag: '-u' | '-g', name: string): number {
  return Number(execFileSync('id', [flag, name], { encoding: 'utf8' }).trim());
}
const uidOf = (name: string) => idOf('-u', name);
const gidOf = (name: string) => idOf('-g', name);

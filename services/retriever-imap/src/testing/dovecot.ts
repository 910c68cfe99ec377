import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';

import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@trawl/platform/testing';

export const DOVECOT_BIN = '/usr/sbin/dovecot';

/** True when Dovecot can be started here (Debian dovecot-imapd installed, running as root). */
export function dovecotAvailable(): boolean {
  return existsSync(DOVECOT_BIN) && typeof process.getuid === 'function' && process.getuid() === 0;
}

export interface TestDovecot {
  host: string;
  port: number;
  user: string;
  password: string;
  dir: string;
  /** Kills the server (SIGTERM to the master pid) and waits until the port is closed. */
  stop(): Promise<void>;
  /** Starts it again on the same port, with the same mail. */
  start(): Promise<void>;
  /** Stops the server and removes every file. */
  destroy(): Promise<void>;
}

/** Pids of every descendant of `pid` (from /proc). */
function descendants(pid: number): number[] {
  const r = spawnSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' });
  const byParent = new Map<number, number[]>();
  for (const line of (r.stdout ?? '').split('\n')) {
    const [p, pp] = line.trim().split(/\s+/).map(Number);
    if (!p || pp === undefined) continue;
    byParent.set(pp, [...(byParent.get(pp) ?? []), p]);
  }
  const out: number[] = [];
  const stack = [pid];
  while (stack.length) {
    const next = byParent.get(stack.pop() as number) ?? [];
    out.push(...next);
    stack.push(...next);
  }
  return out;
}

async function waitPort(port: number, open: boolean): Promise<void> {
  const net = await import('node:net');
  const until = Date.now() + 15_000;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok === open) return;
    if (Date.now() > until)
      throw new Error(`dovecot port ${port} did not ${open ? 'open' : 'close'}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A throwaway Dovecot IMAP server on 127.0.0.1 (a temp folder with its config, state, logs and one
 * user's Maildir). Offers IDLE, MOVE, UIDPLUS, CONDSTORE. Tests only.
 */
export async function startTestDovecot(
  opts: {
    user?: string;
    password?: string;
    /**
     * OAuth 2.0 logins too: an oauth2 passdb that checks each bearer token at an RFC 7662
     * introspection endpoint (`introspection_mode = post`), offering the SASL mechanisms named.
     */
    oauth2?: { introspectionUrl: string; mechanisms: ('xoauth2' | 'oauthbearer')[] };
  } = {},
): Promise<TestDovecot> {
  const user = opts.user ?? 'trawl';
  const password = opts.password ?? `pw-${Math.random().toString(36).slice(2, 10)}`;
  const dir = mkdtempSync(join(tmpdir(), 'trawl-dovecot-'));
  const port = await freePort();
  const base = join(dir, 'run');
  const state = join(dir, 'state');
  const home = join(dir, 'home');
  for (const d of [base, state, home]) mkdirSync(d, { recursive: true });
  chmodSync(dir, 0o755); // the mail user must reach its home
  execFileSync('chown', ['-R', 'mail:mail', home]);
  const conf = join(dir, 'dovecot.conf');
  const oauth = opts.oauth2;
  if (oauth)
    writeFileSync(
      join(dir, 'dovecot-oauth2.conf.ext'),
      `introspection_mode = post
introspection_url = ${oauth.introspectionUrl}
username_attribute = username
active_attribute = active
active_value = true
force_introspection = yes
`,
    );
  const oauthConf = oauth
    ? `passdb {
  driver = oauth2
  mechanisms = ${oauth.mechanisms.join(' ')}
  args = ${join(dir, 'dovecot-oauth2.conf.ext')}
}
`
    : '';
  writeFileSync(
    conf,
    `protocols = imap
listen = 127.0.0.1
base_dir = ${base}
state_dir = ${state}
log_path = ${join(dir, 'dovecot.log')}
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login${oauth ? ` ${oauth.mechanisms.join(' ')}` : ''}
first_valid_uid = 8
mail_privileged_group = mail
${oauthConf}passdb {
  driver = static
  args = password=${password}
${oauth ? '  mechanisms = plain login\n' : ''}}
userdb {
  driver = static
  args = uid=mail gid=mail home=${home}/%u mail=maildir:${home}/%u/Maildir
}
service imap-login {
  inet_listener imap {
    port = ${port}
  }
}
service stats {
  unix_listener stats-reader {
    mode = 0666
  }
  unix_listener stats-writer {
    mode = 0666
  }
}
`,
  );

  async function start(): Promise<void> {
    // It daemonizes: no pipes (spawnSync would wait for the daemon to close them).
    const r = spawnSync(DOVECOT_BIN, ['-c', conf], { stdio: 'ignore' });
    if (r.status !== 0) {
      const log = existsSync(join(dir, 'dovecot.log'))
        ? readFileSync(join(dir, 'dovecot.log'), 'utf8')
        : '';
      throw new Error(`dovecot did not start (exit ${r.status}): ${log.slice(-2000)}`);
    }
    await waitPort(port, true);
  }

  async function stop(): Promise<void> {
    const pidFile = join(base, 'master.pid');
    if (!existsSync(pidFile)) return;
    const pid = Number.parseInt(readFileSync(pidFile, 'utf8').trim(), 10);
    // Its children (imap sessions) may outlive the master: end them too, by pid, as a crash would.
    const children = descendants(pid);
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      return;
    }
    for (const c of children) {
      try {
        process.kill(c, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    const until = Date.now() + 15_000;
    while (Date.now() < until) {
      try {
        process.kill(pid, 0);
      } catch {
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    await waitPort(port, false);
  }

  await start();
  return {
    host: '127.0.0.1',
    port,
    user,
    password,
    dir,
    stop,
    start,
    async destroy() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

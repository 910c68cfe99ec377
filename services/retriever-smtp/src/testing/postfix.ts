import { execFile } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '@trawl/platform/testing';

const run = promisify(execFile);

/** Where Debian's postfix keeps its programs. */
export const POSTFIX_BIN = '/usr/sbin/postfix';

/** Whether a test Postfix can run here: the package is installed and we are root (it must start as root). */
export function postfixAvailable(): boolean {
  return existsSync(POSTFIX_BIN) && typeof process.getuid === 'function' && process.getuid() === 0;
}

export interface TestPostfixOptions {
  /**
   * `none`: no filter; `after-queue`: `content_filter` to the filter, return port smtpd;
   * `before-queue`: `smtpd_proxy_filter` on the public port, after-filter smtpd on the return port;
   * `milter`: `smtpd_milters = inet:127.0.0.1:<milterPort>` (protocol 6, default action tempfail).
   */
  mode: 'none' | 'after-queue' | 'before-queue' | 'milter';
  /** Where the milter listens (milter; another milter, e.g. Rspamd's, may be given). */
  milterPort?: number;
  /** Where the filter listens (after-queue and before-queue). */
  filterPort?: number;
  /** Where Postfix delivers every message (an SMTP sink the test runs). */
  sinkPort: number;
  /** Concurrent deliveries to the filter (after-queue; default 20). */
  filterConcurrency?: number;
  /** smtpd_proxy_timeout (before-queue; default 100s). */
  proxyTimeoutSeconds?: number;
}

export interface TestPostfix {
  host: '127.0.0.1';
  /** Port of the public smtpd: send test mail here. */
  port: number;
  /** Port Postfix takes filtered mail back on (set TRAWL_SMTP_RETURN_PORT to it). */
  returnPort: number;
  dir: string;
  /** Messages still in the queue (active, incoming, deferred, hold, maildrop). */
  queued(): number;
  /** Messages in the hold queue (a milter's quarantine). */
  held(): number;
  /** The instance's own log (maillog_file). */
  log(): string;
  stop(): Promise<void>;
  destroy(): Promise<void>;
}

function countFiles(dir: string): number {
  if (!existsSync(dir)) return 0;
  let n = 0;
  const walk = (d: string) => {
    for (const e of listDir(d)) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else n++;
    }
  };
  walk(dir);
  return n;
}

function listDir(d: string) {
  try {
    return readdirSync(d, { withFileTypes: true });
  } catch {
    return [];
  }
}

/**
 * A throwaway Postfix (Debian `postfix`) of its own: configuration, queue and data directories in
 * a temporary folder, smtpd on free loopback ports, every message relayed to `sinkPort`. Started
 * with `postfix -c DIR start`; it never touches the system instance or port 25.
 */
export async function startTestPostfix(o: TestPostfixOptions): Promise<TestPostfix> {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-postfix-'));
  // Postfix's daemons run as `postfix`: they must be able to reach their data directory.
  chmodSync(dir, 0o755);
  const conf = join(dir, 'etc');
  const queue = join(dir, 'queue');
  const data = join(dir, 'data');
  mkdirSync(conf);
  mkdirSync(queue);
  mkdirSync(data);
  await run('chown', ['postfix:postfix', data]);
  const port = await freePort();
  const returnPort = await freePort();
  const filter = `127.0.0.1:${o.filterPort ?? 0}`;
  const main = [
    'compatibility_level = 3.6',
    `queue_directory = ${queue}`,
    `data_directory = ${data}`,
    'command_directory = /usr/sbin',
    'daemon_directory = /usr/lib/postfix/sbin',
    'meta_directory = /etc/postfix',
    'shlib_directory = /usr/lib/postfix',
    'mail_owner = postfix',
    'setgid_group = postdrop',
    'myhostname = postfix.trawl.test',
    'mydomain = trawl.test',
    'myorigin = $myhostname',
    'mydestination =',
    'inet_interfaces = 127.0.0.1',
    'inet_protocols = ipv4',
    'mynetworks = 127.0.0.0/8',
    'smtpd_relay_restrictions = permit_mynetworks, reject',
    `relayhost = [127.0.0.1]:${o.sinkPort}`,
    'smtp_dns_support_level = disabled',
    'smtp_tls_security_level = none',
    'smtpd_tls_security_level = none',
    'alias_maps =',
    'alias_database =',
    'local_recipient_maps =',
    'biff = no',
    `maillog_file_prefixes = ${dir}`,
    `maillog_file = ${join(dir, 'maillog')}`,
    // Retries come quickly in tests (defaults: minutes).
    'queue_run_delay = 1s',
    'minimal_backoff_time = 1s',
    'maximal_backoff_time = 2s',
    // One message per transaction to the filter: its answer is the answer for the message.
    'smtp_destination_recipient_limit = 50',
    'default_destination_concurrency_limit = 20',
    'smtpd_client_connection_count_limit = 0',
    'smtpd_client_message_rate_limit = 0',
    'anvil_rate_time_unit = 60s',
    ...(o.mode === 'after-queue'
      ? [`content_filter = trawl-filter:[127.0.0.1]:${o.filterPort}`]
      : []),
    ...(o.mode === 'milter'
      ? [
          `smtpd_milters = inet:127.0.0.1:${o.milterPort}`,
          'non_smtpd_milters =',
          'milter_protocol = 6',
          // a milter down or failing: the client is told to try again (Postfix's default)
          'milter_default_action = tempfail',
        ]
      : []),
  ];
  const svc = (
    name: string,
    type: string,
    priv: string,
    wakeup: string,
    max: string,
    cmd: string,
  ) => `${name} ${type} ${priv} - n ${wakeup} ${max} ${cmd}`;
  const master = [
    o.mode === 'before-queue'
      ? `127.0.0.1:${port} inet n - n - 20 smtpd\n  -o smtpd_proxy_filter=${filter}\n  -o smtpd_proxy_options=speed_adjust\n  -o smtpd_proxy_timeout=${o.proxyTimeoutSeconds ?? 100}s`
      : `127.0.0.1:${port} inet n - n - 50 smtpd`,
    svc('pickup', 'unix', 'n', '60', '1', 'pickup'),
    svc('cleanup', 'unix', 'n', '-', '0', 'cleanup'),
    svc('qmgr', 'unix', 'n', '300', '1', 'qmgr'),
    svc('rewrite', 'unix', '-', '-', '-', 'trivial-rewrite'),
    svc('bounce', 'unix', '-', '-', '0', 'bounce'),
    svc('defer', 'unix', '-', '-', '0', 'bounce'),
    svc('trace', 'unix', '-', '-', '0', 'bounce'),
    svc('verify', 'unix', '-', '-', '1', 'verify'),
    svc('flush', 'unix', 'n', '1000?', '0', 'flush'),
    svc('proxymap', 'unix', '-', '-', '-', 'proxymap'),
    svc('smtp', 'unix', '-', '-', '-', 'smtp'),
    svc('relay', 'unix', '-', '-', '-', 'smtp'),
    svc('showq', 'unix', 'n', '-', '-', 'showq'),
    svc('error', 'unix', '-', '-', '-', 'error'),
    svc('retry', 'unix', '-', '-', '-', 'error'),
    svc('discard', 'unix', '-', '-', '-', 'discard'),
    svc('anvil', 'unix', '-', '-', '1', 'anvil'),
    svc('scache', 'unix', '-', '-', '1', 'scache'),
    svc('postlog', 'unix-dgram', 'n', '-', '1', 'postlogd'),
    `trawl-filter unix - - n - ${o.filterConcurrency ?? 20} smtp\n  -o smtp_send_xforward_command=yes\n  -o disable_mime_output_conversion=yes\n  -o smtp_generic_maps=`,
    `127.0.0.1:${returnPort} inet n - n - - smtpd\n  -o content_filter=\n  -o receive_override_options=no_unknown_recipient_checks,no_header_body_checks,no_milters\n  -o smtpd_helo_restrictions=\n  -o smtpd_client_restrictions=\n  -o smtpd_sender_restrictions=\n  -o smtpd_relay_restrictions=permit_mynetworks,reject\n  -o smtpd_recipient_restrictions=permit_mynetworks,reject\n  -o mynetworks=127.0.0.0/8\n  -o smtpd_authorized_xforward_hosts=127.0.0.0/8`,
  ];
  writeFileSync(join(conf, 'main.cf'), `${main.join('\n')}\n`);
  writeFileSync(join(conf, 'master.cf'), `${master.join('\n')}\n`);
  const postfix = (cmd: string) =>
    run(POSTFIX_BIN, ['-c', conf, cmd], {
      env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/bin' },
    });
  await postfix('check');
  await postfix('start');
  // Wait until the public smtpd answers.
  const until = Date.now() + 20_000;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1', () => {
        s.end();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (ok) break;
    if (Date.now() > until)
      throw new Error(`postfix did not start:\n${safeRead(join(dir, 'maillog'))}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await postfix('stop').catch(() => postfix('abort').catch(() => undefined));
  };
  return {
    host: '127.0.0.1',
    port,
    returnPort,
    dir,
    queued: () =>
      ['incoming', 'active', 'deferred', 'hold', 'maildrop'].reduce(
        (n, q) => n + countFiles(join(queue, q)),
        0,
      ),
    held: () => countFiles(join(queue, 'hold')),
    log: () => safeRead(join(dir, 'maillog')),
    stop,
    async destroy() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function safeRead(p: string): string {
  try {
    return readFileSync(p, 'utf8');
  } catch {
    return '';
  }
}

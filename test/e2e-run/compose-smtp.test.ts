/**
 * Issue 32: the Compose setup of the SMTP content filter works as written. No Docker engine runs
 * here (and this machine's docker client has no `compose`), so the file is read: the filter hands
 * mail back to the `postfix` service by its name (not 127.0.0.1, the filter's own container),
 * Postfix hands mail to `retriever-smtp` on the port it listens on in its container, with XFORWARD,
 * and the return smtpd trusts the Compose network; and the postconf commands of the Postfix image's
 * entrypoint are run by Debian's real Postfix against a copy of its configuration, which
 * `postfix check` must accept.
 */
import { execFile } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importVia, ROOT } from './helpers.ts';

const read = (f: string) => readFileSync(join(ROOT, f), 'utf8');

const run = promisify(execFile);

interface Service {
  profiles?: string[];
  environment?: Record<string, string | number>;
  build?: { context?: string } | string;
  ports?: string[];
  depends_on?: string[] | Record<string, unknown>;
}

let services: Record<string, Service>;

beforeAll(async () => {
  const { parse } = await importVia<{ parse: (t: string, o: object) => unknown }>(
    'packages/cli',
    'yaml',
  );
  services = (
    parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, Service> }
  ).services;
});

/** A Compose value with its `${VAR:-default}` written as the default. */
const resolved = (v: string | number | undefined) =>
  String(v ?? '').replace(/\$\{[A-Z0-9_]+:-([^}]*)\}/g, '$1');

describe('docker-compose.yml, profile smtp', () => {
  it('hands filtered mail back to the postfix service, not to the filter’s own loopback', () => {
    const filter = services['retriever-smtp'] as Service;
    const env = filter.environment ?? {};
    const returnHost = resolved(env.TRAWL_SMTP_RETURN_HOST);
    expect(returnHost).not.toMatch(/^(127\.|localhost$|$)/);
    expect(services[returnHost]?.profiles).toContain('smtp');
    expect(resolved(env.TRAWL_SMTP_RETURN_PORT)).toBe('10026');
    expect(resolved(env.TRAWL_SMTP_LISTEN_HOST)).toBe('0.0.0.0');
    // the gateway by its service name, for quarantine release
    expect(resolved(env.TRAWL_SMTP_GATEWAY_URL)).toMatch(/^http:\/\/api-gateway:8001$/);
    expect(services['api-gateway']).toBeDefined();
  });

  it('Postfix hands mail to retriever-smtp on the port it listens on in its container', () => {
    const postfix = services.postfix as Service;
    const env = postfix.environment ?? {};
    expect(env.TRAWL_FILTER_HOST).toBe('retriever-smtp');
    expect(String(env.TRAWL_FILTER_PORT)).toBe(
      String((services['retriever-smtp'] as Service).environment?.TRAWL_SMTP_LISTEN_PORT),
    );
    const build = postfix.build as { context: string };
    expect(existsSync(join(ROOT, build.context, 'Dockerfile'))).toBe(true);
  });
});

const POSTFIX = '/usr/sbin/postfix';
const haveRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const havePostfix = existsSync(POSTFIX) && existsSync('/etc/postfix/master.cf') && haveRoot;
if (!havePostfix && process.env.CI === 'true') {
  throw new Error('postfix missing: CI installs it (scripts/ci.sh)');
}

describe.skipIf(!havePostfix)('the Postfix image’s entrypoint, with Debian’s Postfix', () => {
  let dir = '';
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('configures content_filter with XFORWARD and a return smtpd that postfix check accepts', async () => {
    dir = mkdtempSync(join(tmpdir(), 'trawl-compose-postfix-'));
    chmodSync(dir, 0o755);
    mkdirSync(join(dir, 'queue'));
    mkdirSync(join(dir, 'data'));
    await run('chown', ['postfix:postfix', join(dir, 'data')]);
    // the image's Postfix as Debian installs it, its queue in the temporary folder
    writeFileSync(
      join(dir, 'main.cf'),
      [
        'compatibility_level = 3.6',
        `queue_directory = ${join(dir, 'queue')}`,
        `data_directory = ${join(dir, 'data')}`,
        'command_directory = /usr/sbin',
        'daemon_directory = /usr/lib/postfix/sbin',
        'meta_directory = /etc/postfix',
        'shlib_directory = /usr/lib/postfix',
        'mail_owner = postfix',
        'setgid_group = postdrop',
        'alias_maps =',
        'alias_database =',
        '',
      ].join('\n'),
    );
    copyFileSync('/etc/postfix/master.cf', join(dir, 'master.cf'));
    const script = readFileSync(join(ROOT, 'docker/postfix/entrypoint.sh'), 'utf8');
    // everything the entrypoint configures, run against the copy (MAIL_CONFIG), not the start
    const configure = script.slice(0, script.indexOf('postfix check'));
    const env = {
      PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/bin',
      MAIL_CONFIG: dir,
      TRAWL_FILTER_HOST: 'retriever-smtp',
      TRAWL_FILTER_PORT: '10025',
      POSTFIX_RELAY_DOMAINS: 'example.org',
      POSTFIX_RELAYHOST: '[mail.example.org]:25',
    };
    await run('sh', ['-c', configure], { env });
    await run(POSTFIX, ['-c', dir, 'check'], { env });
    const get = async (...args: string[]) =>
      (await run('/usr/sbin/postconf', ['-c', dir, ...args], { env })).stdout.trim();
    expect(await get('-h', 'content_filter')).toBe('trawl-filter:[retriever-smtp]:10025');
    expect(await get('-h', 'relayhost')).toBe('[mail.example.org]:25');
    expect(await get('-h', 'mynetworks_style')).toBe('subnet');
    const params = await get('-P');
    expect(params).toContain('trawl-filter/unix/smtp_send_xforward_command = yes');
    expect(params).toContain('10026/inet/content_filter =');
    expect(params).toContain('10026/inet/smtpd_authorized_xforward_hosts = $mynetworks');
    expect(await get('-M', '10026/inet')).toMatch(/^10026\s+inet\s+n\s+-\s+n\s+-\s+-\s+smtpd/);
  });
});

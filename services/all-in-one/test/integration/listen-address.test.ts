import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findRepoRoot, loadConfig } from '@trawl/config';
import { freePort } from '@trawl/platform/testing';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { connectHost, type Embedded, startEmbedded } from '../../src/index.ts';

const work = mkdtempSync(join(tmpdir(), 'trawl-embedded-host-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** `pnpm start` with these variables and nothing else (PGlite, in-process broker and cache). */
async function start(env: Record<string, string>, dir: string): Promise<Embedded> {
  const cfg = loadConfig({
    env: { APP_ENV: 'dev', TRAWL_DATA_DIR: join(work, dir), ...env },
    envFile: false,
    rootDir: findRepoRoot(),
    needs: { postgres: false, rabbitmq: false, redis: false, secretKey: true },
  });
  return startEmbedded(cfg, { port: 0, logger: pino({ level: 'silent' }) });
}

describe('embedded mode (pnpm start): where it listens', () => {
  // Regression (issue 19): the README says 127.0.0.1, but it listened on every interface (0.0.0.0),
  // serving a laptop's Trawl to whatever network the laptop is on.
  it('listens on 127.0.0.1 only by default', async () => {
    const e = await start({}, 'default');
    try {
      expect(e.host).toBe('127.0.0.1');
      expect(e.url).toBe(`http://127.0.0.1:${e.port}`);
      expect((await fetch(`${e.url}/health`)).status).toBe(200);
    } finally {
      await e.close();
    }
  });

  it('listens where TRAWL_HOST says, and reaches itself there', async () => {
    const e = await start({ TRAWL_HOST: '0.0.0.0' }, 'all-interfaces');
    try {
      expect(e.host).toBe('0.0.0.0');
      // The mail orchestrator and the banner use this address: a wildcard is reached on loopback.
      expect(e.url).toBe(`http://127.0.0.1:${e.port}`);
      expect((await fetch(`${e.url}/health`)).status).toBe(200);
    } finally {
      await e.close();
    }
  });

  // Regression (issue 28): with retrievers configured, the embedded mail orchestrator took
  // TRAWL_HOST (the gateway's address) and listened on every interface.
  it('the mail orchestrator listens on 127.0.0.1 whatever the gateway does', async () => {
    const port = await freePort();
    const e = await start(
      {
        TRAWL_HOST: '0.0.0.0',
        INTERNAL_API_KEY: 'embedded-listen-test-key-0123456789abcdef',
        TRAWL_MAIL_RETRIEVERS: JSON.stringify({ box: { url: 'http://127.0.0.1:9' } }),
        TRAWL_MAIL_ORCHESTRATOR_PORT: String(port),
      },
      'mail-orchestrator',
    );
    try {
      expect(e.mail).toBe(true);
      expect(await reachable('127.0.0.1', port)).toBe(true);
      // another address of this host (127.0.0.2 is one on Linux): refused, as any interface's is
      expect(await reachable('127.0.0.2', port)).toBe(false);
      // the gateway, told to, is on every interface
      expect(await reachable('127.0.0.2', e.port)).toBe(true);
    } finally {
      await e.close();
    }
  });

  it('reaches a specific listen address by that address (IPv6 in brackets)', () => {
    expect(connectHost('127.0.0.1')).toBe('127.0.0.1');
    expect(connectHost('0.0.0.0')).toBe('127.0.0.1');
    expect(connectHost('::')).toBe('127.0.0.1');
    expect(connectHost('::1')).toBe('[::1]');
    expect(connectHost('192.0.2.10')).toBe('192.0.2.10');
  });
});

/** Whether a TCP connection to host:port is accepted. */
function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

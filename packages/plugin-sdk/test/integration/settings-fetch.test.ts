import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startHostilePeer } from '../../../../test/support/hostile-peer.ts';
import { defineAnalyzer, fetchSettings, startPlugin } from '../../src/index.ts';

const plugin = defineAnalyzer({
  id: 'keyword',
  version: '1.0.0',
  settings: z.object({
    word: z.string().default('verify'),
    confidence_threshold: z.number().min(0).max(1).default(0.5),
  }),
  analyze: (email, { settings }) => ({
    is_phishing: email.headers.subject.includes(settings.word),
    confidence: settings.confidence_threshold,
    indicators: [],
  }),
});

const KEY = 'integration-key-0123456789';

/** A small gateway speaking GET /api/v1/config/analyzers/<id>. */
function gateway(failFirst: number) {
  let calls = 0;
  const current = { settings: { word: 'invoice' } as Record<string, unknown>, version: 'abc123' };
  const seenKeys: (string | undefined)[] = [];
  const server: Server = createServer((req, res) => {
    calls++;
    seenKeys.push(req.headers['x-internal-api-key'] as string | undefined);
    if (calls <= failFirst) {
      res.writeHead(503).end();
      return;
    }
    if (req.headers['x-internal-api-key'] !== KEY) {
      res.writeHead(401, { 'content-type': 'application/problem+json' }).end('{}');
      return;
    }
    const m = /^\/api\/v1\/config\/analyzers\/([^/]+)$/.exec(req.url ?? '');
    if (m?.[1] !== 'keyword') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: 'keyword',
        enabled: true,
        settings: current.settings,
        url: 'http://analyzers:8100/keyword',
        version: current.version,
      }),
    );
  });
  return {
    server,
    current,
    calls: () => calls,
    seenKeys,
    async start() {
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    stop: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('plugin settings from the gateway', () => {
  const gw = gateway(2);
  let url = '';
  beforeAll(async () => {
    url = await gw.start();
  });
  afterAll(() => gw.stop());

  it('retries through 5xx, sends the key, and merges settings over the defaults', async () => {
    const s = await fetchSettings({
      gatewayUrl: url,
      internalApiKey: KEY,
      id: 'keyword',
      def: plugin,
      retries: 3,
      backoffMs: 10,
    });
    expect(gw.calls()).toBe(3);
    expect(gw.seenKeys.every((k) => k === KEY)).toBe(true);
    expect(s).toMatchObject({
      source: 'gateway',
      enabled: true,
      version: 'abc123',
      settings: { word: 'invoice', confidence_threshold: 0.5 },
    });
  });

  it('refuses to start with a wrong key', async () => {
    await expect(
      fetchSettings({ gatewayUrl: url, internalApiKey: 'wrong', id: 'keyword', backoffMs: 1 }),
    ).rejects.toMatchObject({ code: 'TRAWL_ERR_PLUGIN_SETTINGS_REJECTED' });
  });

  it('uses the defaults when the gateway does not know the plugin', async () => {
    const s = await fetchSettings({
      gatewayUrl: `${url}/api/v1`,
      internalApiKey: KEY,
      id: 'other',
    });
    expect(s).toMatchObject({ source: 'defaults', enabled: true, settings: {} });
  });

  it('a started plugin analyses with the fetched settings', async () => {
    const running = await startPlugin(plugin, {
      host: '127.0.0.1',
      port: 0,
      gatewayUrl: url,
      internalApiKey: KEY,
      backoffMs: 10,
      handleSignals: false,
      logLevel: 'silent',
    });
    try {
      const res = await fetch(`${running.address}/keyword/internal/analyze`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-internal-api-key': KEY },
        body: JSON.stringify({
          headers: {
            subject: 'Your invoice',
            sender: 'a@b.example',
            recipients: ['c@d.example'],
            date: '2024-05-01T09:30:00Z',
          },
          body_text: 'see attached',
        }),
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ is_phishing: true, confidence: 0.5 });
    } finally {
      await running.close();
    }
  });
});

describe('plugin settings refresh', () => {
  it('a running plugin picks up changed settings from the gateway', async () => {
    const gw = gateway(0);
    const url = await gw.start();
    const running = await startPlugin(plugin, {
      host: '127.0.0.1',
      port: 0,
      gatewayUrl: url,
      internalApiKey: KEY,
      refreshSeconds: 0.05,
      handleSignals: false,
      logLevel: 'silent',
    });
    const analyze = async () => {
      const res = await fetch(`${running.address}/internal/analyze`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-internal-api-key': KEY },
        body: JSON.stringify({
          headers: {
            subject: 'Your parcel',
            sender: 'a@b.example',
            recipients: ['c@d.example'],
            date: '2024-05-01T09:30:00Z',
          },
          body_text: 'x',
        }),
      });
      return ((await res.json()) as { is_phishing: boolean }).is_phishing;
    };
    try {
      expect(await analyze()).toBe(false);
      gw.current.settings = { word: 'parcel' };
      gw.current.version = 'def456';
      let flagged = false;
      for (let i = 0; i < 200 && !flagged; i++) {
        await new Promise((r) => setTimeout(r, 25));
        flagged = await analyze();
      }
      expect(flagged).toBe(true);
      expect(running.settings.keyword?.version).toBe('def456');
    } finally {
      await running.close();
      await gw.stop();
    }
  });
});

describe('plugin settings when the gateway is down', () => {
  it('falls back to the defaults after its retries', async () => {
    const gw = gateway(0);
    const url = await gw.start();
    await gw.stop(); // nothing listens on this port any more
    const warnings: string[] = [];
    const s = await fetchSettings({
      gatewayUrl: url,
      internalApiKey: KEY,
      id: 'keyword',
      def: plugin,
      retries: 2,
      backoffMs: 5,
      log: { info() {}, warn: (_o, msg) => warnings.push(msg ?? '') },
    });
    expect(s).toMatchObject({
      source: 'defaults',
      settings: { word: 'verify', confidence_threshold: 0.5 },
    });
    expect(warnings.filter((w) => w === 'settings fetch failed')).toHaveLength(3);
    expect(warnings).toContain('gateway unreachable; using the default settings of the plugin');
  });

  it('startPlugin still starts, with local settings when given', async () => {
    const gw = gateway(0);
    const url = await gw.start();
    await gw.stop();
    const running = await startPlugin([plugin], {
      host: '127.0.0.1',
      port: 0,
      gatewayUrl: url,
      retries: 1,
      backoffMs: 5,
      localSettings: { keyword: { word: 'urgent' } },
      handleSignals: false,
      logLevel: 'silent',
    });
    try {
      expect(running.settings.keyword?.settings).toMatchObject({ word: 'urgent' });
      const health = await fetch(`${running.address}/health`);
      expect(health.status).toBe(200);
    } finally {
      await running.close();
    }
  });

  it('refuses a settings answer of 300 MB without reading it (issue 28)', async () => {
    const peer = await startHostilePeer({ status: 200, contentType: 'application/json' });
    try {
      await expect(
        fetchSettings({ gatewayUrl: peer.url, id: 'keyword', internalApiKey: KEY, retries: 0 }),
      ).rejects.toMatchObject({ code: 'TRAWL_ERR_PLUGIN_SETTINGS_REJECTED' });
      expect(peer.bytesWritten).toBeLessThan(32 * 1024 * 1024);
    } finally {
      await peer.close();
    }
  });
});

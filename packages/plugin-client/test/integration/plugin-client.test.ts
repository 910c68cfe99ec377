import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { deriveCredential, type Email, verifyCredential } from '@trawl/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHostilePeer } from '../../../../test/support/hostile-peer.ts';
import { createPluginClient, PluginCallError } from '../../src/index.ts';

const email: Email = {
  headers: {
    subject: 'hello',
    sender: 'a@example.com',
    recipients: ['b@example.com'],
    date: '2024-05-01T09:30:00Z',
  },
  body_text: 'hi',
  analysis_context: {},
};

const okAnswer = { is_phishing: true, confidence: 0.8, threat_level: 'high', indicators: [] };

let server: Server;
let base: string;
const seen: { path: string; key: string | undefined; body: string }[] = [];

function readAll(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

beforeAll(async () => {
  server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readAll(req);
    const key = req.headers['x-internal-api-key'];
    seen.push({ path: req.url ?? '', key: typeof key === 'string' ? key : undefined, body });
    const send = (status: number, payload: string) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(payload);
    };
    switch (req.url) {
      case '/ok/internal/analyze':
        return send(200, JSON.stringify(okAnswer));
      case '/err/internal/analyze':
        return send(500, '{"detail":"boom"}');
      case '/off/internal/analyze':
        // the SDK's problem for an analyzer with nothing to work with (the llm without llm_host)
        return send(
          503,
          '{"status":503,"code":"TRAWL_ERR_LLM_NOT_CONFIGURED","detail":"llm_host is not set"}',
        );
      case '/garbage/internal/analyze':
        return send(200, 'not json at all');
      case '/wrong/internal/analyze':
        return send(200, JSON.stringify({ ...okAnswer, is_phishing: 'yes' }));
      case '/hang/internal/analyze':
        return; // never answers
      case '/prov/internal/enrich':
        return send(200, JSON.stringify({ provider_id: 'prov', data: { vip: true } }));
      case '/ok/health':
        return send(200, '{"status":"ok"}');
      case '/ok/capabilities':
        return send(200, '{"id":"ok","version":"1"}');
      default:
        return send(404, '{}');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

function client(extra: { internalApiKey?: string } = {}) {
  return createPluginClient({
    analyzers: {
      ok: { url: `${base}/ok/` },
      err: { url: `${base}/err` },
      off: { url: `${base}/off` },
      garbage: { url: `${base}/garbage` },
      wrong: { url: `${base}/wrong` },
      hang: { url: `${base}/hang` },
      down: { url: 'http://127.0.0.1:1/down' },
    },
    providers: { prov: { url: `${base}/prov` } },
    ...extra,
  });
}

async function failure(p: Promise<unknown>): Promise<PluginCallError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(PluginCallError);
    return e as PluginCallError;
  }
  throw new Error('expected the call to fail');
}

describe('plugin client', () => {
  it('posts the email to <url>/internal/analyze with the plugin own credential and validates the answer', async () => {
    const c = client({ internalApiKey: 's3cret' });
    const a = await c.analyze('ok', email);
    expect(a).toMatchObject({ is_phishing: true, confidence: 0.8, summary: '' });
    const last = seen.at(-1);
    expect(last?.path).toBe('/ok/internal/analyze');
    expect(last?.key).toBe(deriveCredential('s3cret', { kind: 'plugin', id: 'ok' }));
    expect(JSON.parse(last?.body ?? '{}').headers.subject).toBe('hello');
    await c.close();
  });

  it('never sends the platform key: each plugin gets only its own credential', async () => {
    const c = client({ internalApiKey: 's3cret' });
    await c.analyze('ok', email);
    await c.enrich('prov', { email, stage: 's', workflow_id: 'w' });
    await c.health('ok');
    const keys = seen.slice(-3).map((r) => r.key);
    expect(keys).not.toContain('s3cret');
    expect(keys.map((k) => verifyCredential('s3cret', k ?? ''))).toEqual([
      { kind: 'plugin', id: 'ok' },
      { kind: 'plugin', id: 'prov' },
      { kind: 'plugin', id: 'ok' },
    ]);
    // the plugin's credential cannot be checked as another plugin's
    expect(keys[0]).not.toBe(keys[1]);
    await c.close();
  });

  it('sends no key header when none is configured', async () => {
    const c = client();
    await c.analyze('ok', email);
    expect(seen.at(-1)?.key).toBeUndefined();
    await c.close();
  });

  it('a 500 answer is an error naming the analyzer and the status', async () => {
    const c = client();
    const e = await failure(c.analyze('err', email));
    expect(e.message).toMatch(/^analyzer err answered 500/);
    expect(e.code).toBe('TRAWL_ERR_PLUGIN_STATUS');
    expect(e.retryable).toBe(true);
    await c.close();
  });

  it('a non-JSON answer is an invalid-answer error', async () => {
    const c = client();
    const e = await failure(c.analyze('garbage', email));
    expect(e.message).toMatch(/^analyzer garbage answered invalid JSON: /);
    expect(e.code).toBe('TRAWL_ERR_PLUGIN_INVALID_ANSWER');
    await c.close();
  });

  it('an answer that breaks the contract names the field', async () => {
    const c = client();
    const e = await failure(c.analyze('wrong', email));
    expect(e.message).toContain('/is_phishing:');
    expect(e.message).toMatch(/boolean/);
    await c.close();
  });

  it('a hanging analyzer times out', async () => {
    const c = client();
    const e = await failure(c.analyze('hang', email, { timeoutMs: 150 }));
    expect(e.code).toBe('TRAWL_ERR_PLUGIN_TIMEOUT');
    expect(e.timedOut).toBe(true);
    expect(e.message).toBe('analyzer hang timed out after 150 ms');
    await c.close();
  });

  it('the caller can cancel a call', async () => {
    const c = client();
    const ac = new AbortController();
    const p = c.analyze('hang', email, { signal: ac.signal, timeoutMs: 10_000 });
    setTimeout(() => ac.abort(), 50);
    const e = await failure(p);
    expect(e.code).toBe('TRAWL_ERR_PLUGIN_ABORTED');
    await c.close();
  });

  it('an analyzer that is down is unreachable', async () => {
    const c = client();
    const e = await failure(c.analyze('down', email, { timeoutMs: 2000 }));
    expect(e.code).toBe('TRAWL_ERR_PLUGIN_UNREACHABLE');
    expect(e.message).toMatch(/^analyzer down is unreachable/);
    await c.close();
  });

  it('a plugin that answers a *_NOT_CONFIGURED problem is not configured, not failed', async () => {
    const c = client();
    const e = await failure(c.analyze('off', email));
    expect(e.code).toBe('TRAWL_ERR_PLUGIN_NOT_CONFIGURED');
    expect(e.retryable).toBe(false);
    const broken = await failure(c.analyze('err', email));
    expect(broken.code).toBe('TRAWL_ERR_PLUGIN_STATUS');
    await c.close();
  });

  it('an unknown analyzer id is refused', async () => {
    const c = client();
    const e = await failure(c.analyze('nope', email));
    expect(e.code).toBe('TRAWL_ERR_PLUGIN_UNKNOWN');
    await c.close();
  });

  it('calls a context provider', async () => {
    const c = client();
    const r = await c.enrich('prov', { email, stage: 's1', workflow_id: 'w' });
    expect(r).toEqual({ provider_id: 'prov', data: { vip: true } });
    expect(seen.at(-1)?.path).toBe('/prov/internal/enrich');
    await c.close();
  });

  it('reports health and capabilities', async () => {
    const c = client();
    expect((await c.health('ok')).ok).toBe(true);
    const h = await c.health('down');
    expect(h.ok).toBe(false);
    expect(h.error).toBeTruthy();
    expect(await c.capabilities('ok')).toEqual({ id: 'ok', version: '1' });
    await c.close();
  });

  it('reuses keep-alive connections across many calls', async () => {
    const c = client();
    const before = new Set<number>();
    const onConn = (s: import('node:net').Socket) => before.add(s.remotePort ?? 0);
    server.on('connection', onConn);
    await Promise.all(Array.from({ length: 50 }, () => c.analyze('ok', email)));
    for (let i = 0; i < 50; i++) await c.analyze('ok', email);
    expect(before.size).toBeLessThanOrEqual(32);
    server.off('connection', onConn);
    await c.close();
  });

  it('setTargets switches addresses', async () => {
    const c = client();
    c.setTargets({ analyzers: { moved: { url: `${base}/ok` } } });
    expect((await c.analyze('moved', email)).is_phishing).toBe(true);
    await expect(c.analyze('err', email)).rejects.toThrow(/not configured/);
    await c.close();
  });

  it('reads a few hundred bytes of a 300 MB error page and never quotes it (issue 28)', async () => {
    const peer = await startHostilePeer({ status: 500, contentType: 'text/html' });
    const c = createPluginClient({ analyzers: { big: { url: `${peer.url}/big` } } });
    try {
      const e = await failure(c.analyze('big', email));
      expect(e.code).toBe('TRAWL_ERR_PLUGIN_STATUS');
      expect(e.message).toBe(`analyzer big answered 500 (text/html, ${300 * 1024 * 1024} bytes)`);
      await expect.poll(() => peer.cutOff, { timeout: 5000 }).toBe(1);
      expect(peer.bytesWritten).toBeLessThan(32 * 1024 * 1024);
    } finally {
      await c.close();
      await peer.close();
    }
  });

  it('refuses a 2xx answer past maxAnswerBytes without reading the rest', async () => {
    const peer = await startHostilePeer({ status: 200, contentType: 'application/json' });
    const c = createPluginClient({
      analyzers: { big: { url: `${peer.url}/big` } },
      maxAnswerBytes: 1024 * 1024,
    });
    try {
      const e = await failure(c.analyze('big', email));
      expect(e.code).toBe('TRAWL_ERR_PLUGIN_INVALID_ANSWER');
      expect(e.message).toBe('analyzer big answered more than 1048576 bytes');
      await expect.poll(() => peer.cutOff, { timeout: 5000 }).toBe(1);
      expect(peer.bytesWritten).toBeLessThan(32 * 1024 * 1024);
    } finally {
      await c.close();
      await peer.close();
    }
  });

  it('ends an answer trickled past the call timeout', async () => {
    const peer = await startHostilePeer({ status: 200, bytes: 100_000, trickleMs: 20 });
    const c = createPluginClient({ analyzers: { slow: { url: `${peer.url}/slow` } } });
    try {
      const e = await failure(c.analyze('slow', email, { timeoutMs: 300 }));
      expect(e.code).toBe('TRAWL_ERR_PLUGIN_TIMEOUT');
      await expect.poll(() => peer.cutOff, { timeout: 5000 }).toBe(1);
    } finally {
      await c.close();
      await peer.close();
    }
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkUrl, parsePeer, rspamdVerdict, runPeer } from '../../src/eval/peer.ts';

/**
 * A fake Rspamd on 127.0.0.1: answers /checkv2 with the JSON shape of Rspamd's protocol, the action
 * chosen by a `X-Want:` header of the posted message.
 */
let server: Server;
let base = '';
let inFlight = 0;
let maxInFlight = 0;
const seen: { path: string; rcpt: string | undefined; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ path: req.url ?? '', rcpt: req.headers.rcpt as string | undefined, body });
      const want = /^X-Want: (.*)$/m.exec(body)?.[1]?.trim() ?? 'no action';
      const reply = (status: number, payload: string) =>
        setTimeout(() => {
          inFlight--;
          res.writeHead(status, { 'content-type': 'application/json' }).end(payload);
        }, 20);
      if (want === 'hang') return; // never answers: the client's timeout ends it
      if (want === 'http500') return reply(500, '{"error":"boom"}');
      if (want === 'skip')
        return reply(200, JSON.stringify({ is_skipped: true, score: 0, required_score: 15 }));
      const score = want === 'reject' ? 16 : want === 'no action' ? 1 : 7;
      reply(
        200,
        JSON.stringify({
          is_skipped: false,
          score,
          required_score: 15,
          action: want,
          symbols: { FAKE: { name: 'FAKE', score } },
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const dir = mkdtempSync(join(tmpdir(), 'trawl-eval-peer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const msg = (name: string, want: string) => {
  const p = join(dir, `${name}.eml`);
  writeFileSync(p, `From: a@example.org\r\nX-Want: ${want}\r\nSubject: ${name}\r\n\r\nbody\r\n`);
  return p;
};

describe('rspamd peer', () => {
  it('maps reject, add header and rewrite subject to positive, the other actions to negative', () => {
    const v = (action: string) => rspamdVerdict({ is_skipped: false, action, score: 1 }).positive;
    expect(['reject', 'add header', 'rewrite subject'].map(v)).toEqual([true, true, true]);
    expect(['no action', 'greylist', 'soft reject'].map(v)).toEqual([false, false, false]);
    expect(rspamdVerdict({ is_skipped: true, action: 'reject' })).toMatchObject({
      positive: false,
      skipped: true,
    });
    expect(rspamdVerdict({ error: 'bad' })).toEqual({ positive: false, error: 'bad' });
  });

  it('parses --peer and finds the /checkv2 endpoint', () => {
    expect(parsePeer('rspamd=http://127.0.0.1:11333')).toEqual({
      name: 'rspamd',
      url: 'http://127.0.0.1:11333/',
    });
    expect(() => parsePeer('spamassassin=http://127.0.0.1:783')).toThrow(/rspamd=URL/);
    expect(() => parsePeer('rspamd=ftp://x')).toThrow(/http/);
    expect(checkUrl('http://127.0.0.1:11333')).toBe('http://127.0.0.1:11333/checkv2');
    expect(checkUrl('http://h/rspamd/')).toBe('http://h/rspamd/checkv2');
    expect(checkUrl('http://h/checkv2')).toBe('http://h/checkv2');
  });

  it('posts every raw message, in bounded concurrency, and keeps the verdicts in order', async () => {
    seen.length = 0;
    maxInFlight = 0;
    const wants = ['reject', 'no action', 'add header', 'greylist', 'rewrite subject', 'skip'];
    const paths = Array.from({ length: 24 }, (_, i) => msg(`m${i}`, wants[i % wants.length]!));
    let progress = 0;
    const r = await runPeer({ name: 'rspamd', url: base }, paths, {
      concurrency: 3,
      timeoutMs: 5000,
      onProgress: (done) => {
        progress = done;
      },
    });
    expect(progress).toBe(24);
    expect(maxInFlight).toBeLessThanOrEqual(3);
    expect(maxInFlight).toBeGreaterThan(1);
    expect(seen).toHaveLength(24);
    expect(seen.every((s) => s.path === '/checkv2')).toBe(true);
    expect(seen.every((s) => s.rcpt === 'mailbox@eval.invalid')).toBe(true);
    expect(seen.some((s) => s.body.includes('Subject: m7\r\n'))).toBe(true); // raw bytes, CRLF kept
    expect(r.verdicts.map((v) => v.positive)).toEqual(
      paths.map((_, i) => [true, false, true, false, true, false][i % 6]),
    );
    expect(r.verdicts[0]).toMatchObject({ action: 'reject', score: 16, required: 15 });
    expect(r.skipped).toBe(4);
    expect(r.errors).toBe(0);
    expect(r.msgsPerS).toBeGreaterThan(0);
  });

  it('counts HTTP errors, timeouts and a dead server as negative, with the reason', async () => {
    const r = await runPeer(
      { name: 'rspamd', url: base },
      [msg('e1', 'http500'), msg('e2', 'hang'), msg('e3', 'reject')],
      { concurrency: 3, timeoutMs: 300 },
    );
    expect(r.verdicts[0]).toMatchObject({
      positive: false,
      error: expect.stringMatching(/^HTTP 500/),
    });
    expect(r.verdicts[1]).toEqual({ positive: false, error: 'timeout after 300 ms' });
    expect(r.verdicts[2]!.positive).toBe(true);
    expect(r.errors).toBe(2);
    // nothing listens on port 9 of loopback
    const dead = await runPeer({ name: 'rspamd', url: 'http://127.0.0.1:9' }, [msg('e4', 'x')], {
      timeoutMs: 2000,
    });
    expect(dead.verdicts[0]!.positive).toBe(false);
    expect(dead.verdicts[0]!.error).toBeTruthy();
  });
});

import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type HostilePeer,
  rssMiB,
  startHostilePeer,
} from '../../../../test/support/hostile-peer.ts';
import { describeAnswer, fetchBounded, PeerAnswerError, readBounded } from '../../src/index.ts';

/** Bounded reads against a real peer on loopback (issue 28). */
describe('fetchBounded / readBounded', () => {
  let peer: HostilePeer | undefined;
  afterEach(async () => {
    await peer?.close();
    peer = undefined;
  });

  it('reads a few hundred bytes of a 300 MB error body, then closes the connection', async () => {
    peer = await startHostilePeer({ status: 500 });
    const before = rssMiB();
    const a = await fetchBounded(
      peer.url,
      { method: 'POST', body: '{}' },
      {
        maxBytes: 1024 * 1024,
        timeoutMs: 10_000,
        errorBytes: 300,
      },
    );
    expect(a.status).toBe(500);
    expect(a.body.length).toBe(300);
    expect(a.truncated).toBe(true);
    await expect.poll(() => peer?.cutOff, { timeout: 5000 }).toBe(1);
    // the peer could write only what the socket buffers held before the client closed it
    expect(peer.bytesWritten).toBeLessThan(32 * 1024 * 1024);
    expect(rssMiB() - before).toBeLessThan(100);
    // an HTML page is described, never quoted
    expect(describeAnswer(a)).toBe(`HTTP 500 (text/html, ${300 * 1024 * 1024} bytes)`);
  });

  it('refuses a 2xx body over maxBytes, declared or streamed, without reading the rest', async () => {
    peer = await startHostilePeer({ status: 200, contentType: 'application/json' });
    await expect(
      fetchBounded(peer.url, {}, { maxBytes: 1024, timeoutMs: 10_000 }),
    ).rejects.toMatchObject({ code: 'TRAWL_ERR_PEER_ANSWER_TOO_LARGE', kind: 'too-large' });
    await peer.close();
    peer = await startHostilePeer({ status: 200, declareLength: false });
    const err = await fetchBounded(peer.url, {}, { maxBytes: 64 * 1024, timeoutMs: 10_000 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(PeerAnswerError);
    await expect.poll(() => peer?.cutOff, { timeout: 5000 }).toBe(1);
    expect(peer.bytesWritten).toBeLessThan(32 * 1024 * 1024);
  });

  it('ends a trickled answer at the deadline, headers received or not', async () => {
    peer = await startHostilePeer({ status: 200, bytes: 10_000, trickleMs: 50, trickleBytes: 1 });
    const t0 = performance.now();
    const err = await fetchBounded(peer.url, {}, { maxBytes: 1 << 20, timeoutMs: 400 }).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'TRAWL_ERR_PEER_TIMEOUT', kind: 'timeout' });
    expect(performance.now() - t0).toBeLessThan(5000);
    await expect.poll(() => peer?.cutOff, { timeout: 5000 }).toBe(1);
  });

  it("the caller's abort is thrown as its own reason, not as a timeout", async () => {
    peer = await startHostilePeer({ status: 200, bytes: 10_000, trickleMs: 50 });
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('stopping')), 100);
    const err = await fetchBounded(
      peer.url,
      {},
      {
        maxBytes: 1 << 20,
        timeoutMs: 10_000,
        signal: ac.signal,
      },
    ).catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(PeerAnswerError);
  });

  it('bounds a Node stream (http.IncomingMessage) the same way and destroys it', async () => {
    peer = await startHostilePeer({ status: 500 });
    const url = peer.url;
    const res = await new Promise<import('node:http').IncomingMessage>((resolve, reject) =>
      request(url, resolve).on('error', reject).end(),
    );
    const r = await readBounded(res, { maxBytes: 100, over: 'truncate' });
    expect(r).toMatchObject({ truncated: true });
    expect(r.bytes.length).toBe(100);
    expect(res.destroyed).toBe(true);
  });

  it('quotes a short text only of a plain-text or JSON body, on one line', async () => {
    peer = await startHostilePeer({
      status: 503,
      contentType: 'application/problem+json',
      bytes: 5000,
      pattern: '{"detail":"down\r\nfor maintenance"}',
    });
    const a = await fetchBounded(peer.url, {}, { maxBytes: 1024, timeoutMs: 5000 });
    const d = describeAnswer(a, 40);
    expect(
      d.startsWith('HTTP 503 (application/problem+json, 5000 bytes): {"detail":"down for'),
    ).toBe(true);
    expect(d).not.toMatch(/[\r\n]/);
    expect(d.endsWith('…')).toBe(true);
  });
});

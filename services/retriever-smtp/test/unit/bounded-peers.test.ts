import { describe, expect, it } from 'vitest';
import { startHostilePeer } from '../../../../test/support/hostile-peer.ts';
import { startHostileSmtp } from '../../../../test/support/hostile-smtp.ts';
import { createIngestClient, createReinjector, ReinjectError } from '../../src/index.ts';

const RAW = Buffer.from('From: a@example.org\r\nSubject: hi\r\n\r\nbody\r\n');

/** Issue 28: what the filter reads from its peers (the mail orchestrator, Postfix) is bounded. */
describe('the SMTP filter reads its peers within bounds', () => {
  it('re-injection: a return port that trickles its reply is cut off at the reply deadline', async () => {
    const smtp = await startHostileSmtp({ mode: 'trickle', trickleMs: 20 });
    const r = createReinjector({
      host: '127.0.0.1',
      port: smtp.port,
      connections: 1,
      replyTimeoutMs: 300,
    });
    try {
      const t0 = performance.now();
      const err = await r
        .send({ from: 'a@example.org', to: ['b@example.org'], raw: RAW })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ReinjectError);
      // it would have trickled for ever (a byte every 20 ms keeps socketTimeout from firing)
      expect(performance.now() - t0).toBeLessThan(10_000);
      await expect.poll(() => smtp.cutOff, { timeout: 5000 }).toBeGreaterThan(0);
    } finally {
      r.close();
      await smtp.close();
    }
  });

  it('re-injection: an endless EHLO reply is cut off past 64 KiB', async () => {
    const smtp = await startHostileSmtp({ mode: 'huge' });
    const r = createReinjector({ host: '127.0.0.1', port: smtp.port, connections: 1 });
    try {
      const err = await r
        .send({ from: 'a@example.org', to: ['b@example.org'], raw: RAW })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ReinjectError);
      await expect.poll(() => smtp.cutOff, { timeout: 5000 }).toBeGreaterThan(0);
      expect(smtp.bytesWritten).toBeLessThan(16 * 1024 * 1024);
    } finally {
      r.close();
      await smtp.close();
    }
  });

  it('push: a 300 MB answer of the mail orchestrator is read no further than 64 KiB', async () => {
    const peer = await startHostilePeer({ status: 503, contentType: 'application/json' });
    const client = createIngestClient({ url: peer.url });
    try {
      const sub = await client.submit({ id: 'x', raw: RAW, to: [] }, AbortSignal.timeout(10_000));
      expect(sub).toEqual({ kind: 'unavailable', reason: 'Trawl answered 503' });
      await expect.poll(() => peer.cutOff, { timeout: 5000 }).toBe(1);
      expect(peer.bytesWritten).toBeLessThan(32 * 1024 * 1024);
    } finally {
      await peer.close();
    }
  });
});

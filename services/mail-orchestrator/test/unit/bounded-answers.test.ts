import { topology } from '@trawl/contracts';
import { createMemoryBroker, createMemoryCache, declareTopology } from '@trawl/platform';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { startHostilePeer } from '../../../../test/support/hostile-peer.ts';
import {
  buildMailOrchestrator,
  createGatewayClient,
  GatewayUnavailableError,
} from '../../src/index.ts';

const KEY = 'internal-key-for-tests-0123456789';

/** Issue 28: every answer the mail orchestrator reads from a peer is bounded. */
describe('answers of retrievers and of the gateway are read within a bound', () => {
  it('a retriever answering a fetch with 300 MB is a failed fetch, read no further than the bound', async () => {
    const peer = await startHostilePeer({ status: 200, contentType: 'application/json' });
    const broker = createMemoryBroker();
    const t = topology('mo-bounded');
    await declareTopology(broker, t);
    const orch = buildMailOrchestrator({
      retrievers: { big: { url: peer.url, priority: 0, enabled: true } },
      gateway: { baseUrl: 'http://127.0.0.1:9' },
      internalApiKey: KEY,
      broker,
      topology: t,
      cache: createMemoryCache({ maxEntries: 100 }),
      logger: pino({ level: 'silent' }),
      // 2 messages of at most 64 KiB: a fetch answer is read up to ~240 KiB
      options: { batchSize: 2, maxMessageBytes: 64 * 1024 },
    });
    try {
      const report = await orch.pollOnce();
      expect(report.polled[0]?.error).toMatch(/the answer is \d+ bytes, over \d+/);
      await expect.poll(() => peer.cutOff, { timeout: 5000 }).toBe(1);
      expect(peer.bytesWritten).toBeLessThan(32 * 1024 * 1024);
    } finally {
      await orch.stop(0);
      await broker.close();
      await peer.close();
    }
  });

  it('a gateway answering a job read with 300 MB is unavailable, its answer cut off', async () => {
    const peer = await startHostilePeer({ status: 200, contentType: 'application/json' });
    const gw = createGatewayClient({ baseUrl: peer.url, internalApiKey: KEY, timeoutMs: 10_000 });
    try {
      await expect(gw.getJob('8318aa55-2c31-4e77-a816-90071910c28b')).rejects.toBeInstanceOf(
        GatewayUnavailableError,
      );
      await expect.poll(() => peer.cutOff, { timeout: 5000 }).toBe(1);
      expect(peer.bytesWritten).toBeLessThan(64 * 1024 * 1024);
    } finally {
      await peer.close();
    }
  });

  it('an error page of 300 MB is read for 16 KiB only', async () => {
    const peer = await startHostilePeer({ status: 500, contentType: 'text/html' });
    const gw = createGatewayClient({ baseUrl: peer.url, internalApiKey: KEY, timeoutMs: 10_000 });
    try {
      await expect(gw.getJob('8318aa55-2c31-4e77-a816-90071910c28b')).rejects.toThrow(
        /answered 500/,
      );
      await expect.poll(() => peer.cutOff, { timeout: 5000 }).toBe(1);
      expect(peer.bytesWritten).toBeLessThan(32 * 1024 * 1024);
    } finally {
      await peer.close();
    }
  });
});

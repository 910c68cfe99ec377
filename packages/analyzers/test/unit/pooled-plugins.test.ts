import { createPluginClient, type PluginCallError } from '@trawl/plugin-client';
import { createPluginApp } from '@trawl/plugin-sdk';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnalysisPool, createAnalysisPool } from '../../src/worker-pool/analysis-pool.ts';
import { pooledPlugins } from '../../src/worker-pool/pooled-plugins.ts';
import { makeEmail } from '../fixtures/emails.ts';
import { analyzers } from '../fixtures/spin-analyzers.ts';

/**
 * Issue 15, deadlines that hold in scale-out: the analyzers service serves the analyzers its pool
 * runs from worker threads. A synchronous analyzer that overruns is stopped at the service's
 * timeout and answers 504 TRAWL_ERR_PLUGIN_TIMEOUT, which the orchestrator's HTTP client reports
 * as a timeout (as when a remote plugin does not answer in time); meanwhile the HTTP thread
 * answers /health at once; the worker is replaced and the next calls succeed.
 */
describe('analyzers service: built-in analyzers in the worker pool', () => {
  const TIMEOUT_MS = 400;
  let pool: AnalysisPool;
  let app: FastifyInstance;
  let base = '';
  const replaced: string[] = [];
  const settings: Record<string, unknown> = { quick: { confidence: 0.7 }, spin: {} };

  beforeAll(async () => {
    pool = await createAnalysisPool({
      size: 2,
      definitions: {
        module: new URL('../fixtures/spin-analyzers.ts', import.meta.url),
        ids: ['quick', 'spin'],
      },
      defaultTimeoutMs: 30_000,
      onReplace: (i) => replaced.push(`${i.reason}:${i.analyzer}`),
    });
    app = createPluginApp({
      plugins: pooledPlugins(Object.values(analyzers), pool, { timeoutMs: TIMEOUT_MS }),
      settingsSource: (id) => settings[id],
      serviceName: 'analyzers',
    });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await pool?.close();
  });

  const post = (id: string) =>
    fetch(`${base}/${id}/internal/analyze`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(makeEmail({ subject: `to ${id}` })),
    });

  it('answers from a worker with the settings the server holds', async () => {
    const r = await post('quick');
    expect(r.status).toBe(200);
    const body = await r.json();
    expect(body).toMatchObject({
      is_phishing: true,
      confidence: 0.7,
      analyzer_details: { subject: 'to quick' },
    });
  });

  it('stops an overrunning synchronous analyzer at its deadline, answering a timeout, with /health free meanwhile', async () => {
    let settled = false;
    const call = post('spin').finally(() => {
      settled = true;
    });
    // the HTTP thread is free while the worker spins: /health is answered before the call ends
    await new Promise((r) => setTimeout(r, 100));
    const h = await fetch(`${base}/health`);
    expect(h.status).toBe(200);
    expect(settled).toBe(false);
    // the spin would run 60 s (the test's own timeout is 30 s): it was cut at its deadline
    const r = await call;
    expect(r.status).toBe(504);
    expect(((await r.json()) as { code?: string }).code).toBe('TRAWL_ERR_PLUGIN_TIMEOUT');
    expect(replaced).toContain('deadline:spin');
    // the pool goes on with a fresh worker
    expect((await post('quick')).status).toBe(200);
  }, 30_000);

  it("the orchestrator's HTTP client records the cut call as a timeout", async () => {
    const client = createPluginClient({
      analyzers: { spin: { url: `${base}/spin` } },
      providers: {},
    });
    try {
      const err = (await client
        .analyze('spin', makeEmail({ subject: 'spin' }), { timeoutMs: 20_000 })
        .then(
          () => null,
          (e: unknown) => e,
        )) as PluginCallError | null;
      expect(err).not.toBeNull();
      expect(err?.failure).toBe('timeout');
      expect(err?.timedOut).toBe(true);
    } finally {
      await client.close();
    }
  }, 30_000);
});

import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadServiceFiles } from '@trawl/config';
import type { Email } from '@trawl/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddedInvoker } from '../../src/local-invoker.ts';
import { builtinAnalyzers } from '../../src/registry.ts';
import { type AnalysisPool, createAnalysisPool } from '../../src/worker-pool/analysis-pool.ts';
import { hamColleague, hamNewsletter, makeEmail } from '../fixtures/emails.ts';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const service = loadServiceFiles({
  configFile: join(root, 'config/defaults/service.yaml'),
  workflowsFile: join(root, 'config/defaults/workflows.yaml'),
}).service;

const phish = () =>
  makeEmail({
    from: 'PayPal Security <security@paypa1-verify.com>',
    subject: 'Urgent: your account will be suspended',
    html: '<p>Dear customer, verify your password within 24 hours.</p><a href="http://192.0.2.7/paypal/login">https://www.paypal.com/login</a>',
    attachments: [{ filename: 'invoice.html', content_type: 'text/html', content: '<form>' }],
  });

/**
 * The offline analyzers in the pool's worker threads (the bundled worker, default definitions)
 * answer exactly what they answer on the main thread, for the same Email and settings.
 */
describe('analysis pool with the built-in offline analyzers', () => {
  let pool: AnalysisPool;
  beforeAll(async () => {
    pool = await createAnalysisPool({ size: 2 });
  }, 60_000);
  afterAll(async () => {
    await pool?.close();
  });

  it('runs the offline analyzers and gives the answers of the main thread', async () => {
    const local = createEmbeddedInvoker({
      builtins: builtinAnalyzers,
      service: () => service,
      internalApiKey: undefined,
    });
    const pooled = createEmbeddedInvoker({
      builtins: builtinAnalyzers,
      service: () => service,
      internalApiKey: undefined,
      pool,
    });
    expect([...pool.ids].sort()).toEqual(
      ['attachments', 'content', 'headers', 'rules', 'scorer', 'urls'].sort(),
    );
    for (const make of [hamColleague, hamNewsletter, phish]) {
      // fresh Emails for each side: the analyzers memoise per Email object
      const ids = ['headers', 'urls', 'content', 'attachments', 'rules'];
      const a = await Promise.all(ids.map((id) => local.analyze(id, make())));
      const one: Email = make();
      // the calls of one stage: copies of one Email, as the engine makes them
      const b = await Promise.all(
        ids.map((id) => pooled.analyze(id, { ...one }, { timeoutMs: 10_000 })),
      );
      expect(b).toEqual(a);
    }
    expect(pool.stats().inFlight).toBe(0);
  }, 60_000);

  it('with pooledMinChars, only a large message goes to a worker; a small one runs here, same answers', async () => {
    const sized = createEmbeddedInvoker({
      builtins: builtinAnalyzers,
      service: () => service,
      internalApiKey: undefined,
      pool,
      pooledMinChars: 64 * 1024,
    });
    const local = createEmbeddedInvoker({
      builtins: builtinAnalyzers,
      service: () => service,
      internalApiKey: undefined,
    });
    // a small message: answered on this thread (the pool sees no call)
    const smallCall = sized.analyze('content', phish(), { timeoutMs: 10_000 });
    await new Promise((r) => setImmediate(r));
    expect(pool.stats().inFlight).toBe(0);
    expect(await smallCall).toEqual(await local.analyze('content', phish()));
    // a large one goes to a worker: its call is in flight there until it answers
    const big = () =>
      makeEmail({
        from: 'News <news@example.com>',
        subject: 'Weekly digest',
        text: 'An ordinary newsletter paragraph with nothing to ask. '.repeat(2000),
      });
    const pending = sized.analyze('content', big(), { timeoutMs: 10_000 });
    // the pool dispatches the calls of one turn together, on the next one
    await new Promise((r) => setImmediate(r));
    expect(pool.stats().inFlight).toBe(1);
    expect(await pending).toEqual(await local.analyze('content', big()));
  }, 60_000);
});

import type { Email } from '@trawl/contracts';
import { describe, expect, it } from 'vitest';
import { createInProcessInvoker, PluginCallError } from '../../src/index.ts';

const email: Email = {
  headers: {
    subject: 's',
    sender: 'a@example.com',
    recipients: ['b@example.com'],
    date: '2024-05-01T09:30:00Z',
  },
  body_text: 'x',
  analysis_context: {},
};

describe('in-process invoker', () => {
  const inv = createInProcessInvoker({
    analyzers: {
      ok: () => ({ is_phishing: false, confidence: 0.9, indicators: [] }),
      bad: () => ({ is_phishing: 1 }) as never,
      throws: () => {
        throw new Error('kaput');
      },
      hang: (_e, { signal }) =>
        new Promise((_r, reject) => signal.addEventListener('abort', () => reject(new Error('x')))),
    },
    providers: { p: () => ({ data: { a: 1 } }) },
  });

  it('answers a validated result with defaults filled', async () => {
    expect(await inv.analyze('ok', email)).toEqual({
      is_phishing: false,
      confidence: 0.9,
      indicators: [],
      summary: '',
    });
  });

  it('fills provider_id of an enrichment', async () => {
    expect(await inv.enrich('p', { email, stage: 's', workflow_id: 'w' })).toEqual({
      provider_id: 'p',
      data: { a: 1 },
    });
  });

  it('turns a malformed answer, a throw and a timeout into PluginCallErrors', async () => {
    await expect(inv.analyze('bad', email)).rejects.toThrow(
      /analyzer bad answered an invalid result: \/is_phishing/,
    );
    await expect(inv.analyze('throws', email)).rejects.toThrow('analyzer throws failed: kaput');
    const e = await inv.analyze('hang', email, { timeoutMs: 20 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(PluginCallError);
    expect((e as PluginCallError).timedOut).toBe(true);
  });

  it("cancels a call when the caller's signal aborts: the call rejects and the function's signal aborts", async () => {
    let seen: AbortSignal | undefined;
    const cancellable = createInProcessInvoker({
      analyzers: {
        wait: (_e, ctx) => {
          seen = ctx.signal;
          return new Promise(() => {});
        },
      },
    });
    const outer = new AbortController();
    const call = cancellable.analyze('wait', email, { signal: outer.signal });
    await new Promise((r) => setTimeout(r, 5));
    outer.abort();
    const e = await call.catch((x: unknown) => x);
    expect(e).toBeInstanceOf(PluginCallError);
    expect((e as PluginCallError).message).toBe('analyzer wait: call cancelled');
    expect(seen?.aborted).toBe(true);
  });

  it('a call bounded by its caller gets the caller signal, read only when the function reads it; answers still validated', async () => {
    const caller = new AbortController();
    let reads = 0;
    const opts = {
      boundedByCaller: true,
      timeoutMs: 1,
      get signal() {
        reads++;
        return caller.signal;
      },
    };
    let seen: AbortSignal | undefined;
    const bounded = createInProcessInvoker({
      analyzers: {
        ok: () => ({ is_phishing: true, confidence: 0.7, indicators: [] }),
        looks: async (_e, ctx) => {
          seen = ctx.signal;
          await new Promise((r) => setTimeout(r, 20));
          return { is_phishing: false, confidence: 0.6, indicators: [] };
        },
        bad: () => ({ is_phishing: 'no' }) as never,
        throws: () => {
          throw new Error('kaput');
        },
      },
    });
    expect(await bounded.analyze('ok', email, opts)).toEqual({
      is_phishing: true,
      confidence: 0.7,
      summary: '',
      indicators: [],
    });
    expect(reads).toBe(0);
    // no timer of its own: the caller decides when to stop waiting (here, past timeoutMs)
    expect((await bounded.analyze('looks', email, opts)).confidence).toBe(0.6);
    expect(seen).toBe(caller.signal);
    expect(reads).toBe(1);
    await expect(bounded.analyze('bad', email, opts)).rejects.toThrow(
      /analyzer bad answered an invalid result: \/is_phishing/,
    );
    await expect(bounded.analyze('throws', email, opts)).rejects.toThrow(
      'analyzer throws failed: kaput',
    );
  });

  it('sends unknown ids to the fallback', async () => {
    const outer = createInProcessInvoker({
      analyzers: {},
      fallback: inv,
    });
    expect((await outer.analyze('ok', email)).confidence).toBe(0.9);
    const bare = createInProcessInvoker({});
    await expect(bare.analyze('ok', email)).rejects.toThrow('analyzer ok is not configured');
  });
});

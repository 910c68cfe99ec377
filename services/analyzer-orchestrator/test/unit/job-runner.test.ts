import { createInProcessInvoker } from '@trawl/plugin-client';
import { describe, expect, it } from 'vitest';
import { createConfigSource, createJobRunner } from '../../src/index.ts';
import { email, snapshot, wf } from './helpers.ts';

/**
 * The in-process invoker under the engine: the engine bounds each call (the invoker arms no timer
 * of its own), so analyzer timeouts, cancellation and the validation of answers must still hold.
 */
describe('job runner with in-process analyzers', () => {
  const workflow = wf({
    id: 'w',
    name: 'W',
    stages: [
      {
        name: 's',
        continue_on_failure: true,
        min_successful_analyzers: 1,
        analyzers: [
          { id: 'good' },
          { id: 'hangs', timeout_ms: 30 },
          { id: 'listens', timeout_ms: 30 },
          { id: 'invalid' },
          { id: 'throws' },
        ],
      },
    ],
  });
  const seen: { signal?: AbortSignal } = {};
  /** The signal the `listens` analyzer read last (a call, so that no narrowing sticks). */
  const lastSignal = (): AbortSignal | undefined => seen.signal;
  const invoker = createInProcessInvoker({
    analyzers: {
      good: () => ({ is_phishing: true, confidence: 0.8, indicators: [] }),
      // ignores its signal and never answers
      hangs: () => new Promise(() => {}),
      listens: (_e, ctx) => {
        seen.signal = ctx.signal;
        return new Promise(() => {});
      },
      invalid: () => ({ is_phishing: true, confidence: 3, indicators: [] }),
      throws: () => {
        throw new Error('kaput');
      },
    },
  });
  const run = createJobRunner({ invoker, config: createConfigSource(snapshot('v1', [workflow])) });

  it('times out an analyzer at its timeout_ms, aborts its signal, and fails an invalid answer', async () => {
    const out = await run('w', email);
    expect(out?.status).toBe('completed');
    const calls = out?.trace.stages[0]?.analyzers ?? [];
    expect(calls.map((c) => [c.id, c.status])).toEqual([
      ['good', 'success'],
      ['hangs', 'timeout'],
      ['listens', 'timeout'],
      ['invalid', 'failed'],
      ['throws', 'failed'],
    ]);
    expect(calls[1]?.error).toBe('timed out after 30 ms');
    expect(lastSignal()?.aborted).toBe(true);
    expect(calls[3]?.error).toMatch(/analyzer invalid answered an invalid result: \/confidence/);
    expect(calls[4]?.error).toBe('analyzer throws failed: kaput');
  });

  it('a cancelled run aborts the signal of the analyzer in flight', async () => {
    delete seen.signal;
    const ac = new AbortController();
    const only = wf({
      id: 'l',
      name: 'L',
      stages: [{ name: 's', analyzers: [{ id: 'listens', timeout_ms: 60_000 }] }],
    });
    const runOne = createJobRunner({ invoker, config: createConfigSource(snapshot('v1', [only])) });
    const pending = runOne('l', email, { signal: ac.signal });
    await new Promise((r) => setTimeout(r, 5));
    ac.abort();
    const out = await pending;
    expect(out?.status).toBe('failed');
    expect(lastSignal()?.aborted).toBe(true);
  });
});

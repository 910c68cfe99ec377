import type { ServiceConfigFile } from '@trawl/contracts';
import { PluginCallError } from '@trawl/plugin-client';
import { defineAnalyzer, defineContextProvider } from '@trawl/plugin-sdk';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createEmbeddedInvoker } from '../../src/local-invoker.ts';
import { makeEmail } from '../fixtures/emails.ts';

const email = makeEmail({ subject: 'Quarterly report', text: 'See the attached figures.' });

function service(over: Partial<ServiceConfigFile> = {}): ServiceConfigFile {
  return {
    version: '1',
    platform: { log_level: 'info', debug: false },
    analyzer: { timeout_ms: 5000, min_confidence: 0 },
    workflow: { default_workflow_id: 'default', max_retries: 3 },
    verdict: { thresholds: { low: 0.3, medium: 0.5, high: 0.7, critical: 0.9 } },
    analyzers: {},
    plugins: { analyzers: {}, context_providers: {} },
    ...over,
  };
}

let reads = 0;
let seenSignal: AbortSignal | undefined;
const echo = defineAnalyzer({
  id: 'echo',
  version: '1.0.0',
  settings: z.object({ word: z.string().default('none'), level: z.number().default(0.5) }),
  analyze: (_e, ctx) => {
    if (ctx.settings.word === 'look') seenSignal = ctx.signal;
    return {
      is_phishing: ctx.settings.level > 0.5,
      confidence: ctx.settings.level,
      indicators: [{ type: 'rule_match', value: ctx.settings.word, confidence: 0.5 }],
      analyzer_details: { word: ctx.settings.word },
    };
  },
});
const bad = defineAnalyzer({
  id: 'bad',
  version: '1.0.0',
  settings: z.object({}),
  analyze: () => ({ is_phishing: true, confidence: 2, indicators: [] }),
});
const domains = defineContextProvider({
  id: 'domains',
  version: '1.0.0',
  settings: z.object({}),
  enrich: (req) => ({ provider_id: 'someone-else', data: { stage: req.stage } }) as never,
});
const builtins = { echo, bad, domains };

describe('embedded invoker (built-ins in process)', () => {
  it('runs a built-in with its service.yaml settings over the defaults, and validates its answer', async () => {
    const svc = service({ analyzers: { echo: { enabled: true, settings: { level: 0.9 } } } });
    const inv = createEmbeddedInvoker({ builtins, service: () => svc, internalApiKey: undefined });
    const a = await inv.analyze('echo', email);
    expect(a).toEqual({
      is_phishing: true,
      confidence: 0.9,
      summary: '',
      indicators: [{ type: 'rule_match', value: 'none', confidence: 0.5 }],
      analyzer_details: { word: 'none' },
    });
    await expect(inv.analyze('bad', email)).rejects.toThrow(
      /analyzer bad answered an invalid result: \/confidence/,
    );
  });

  it('uses the settings of the service.yaml current at each call (after a reload)', async () => {
    let svc = service({ analyzers: { echo: { enabled: true, settings: { word: 'first' } } } });
    const inv = createEmbeddedInvoker({ builtins, service: () => svc, internalApiKey: undefined });
    expect((await inv.analyze('echo', email)).analyzer_details).toEqual({ word: 'first' });
    svc = service({ analyzers: { echo: { enabled: true, settings: { word: 'second' } } } });
    expect((await inv.analyze('echo', email)).analyzer_details).toEqual({ word: 'second' });
    svc = service({ analyzers: { echo: { enabled: false, settings: {} } } });
    const e = await inv.analyze('echo', email).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(PluginCallError);
    expect((e as Error).message).toMatch(/echo is disabled/);
  });

  it("hands the caller's signal to a built-in that reads it, and reads it only then", async () => {
    const svc = service({ analyzers: { echo: { enabled: true, settings: { word: 'look' } } } });
    const inv = createEmbeddedInvoker({ builtins, service: () => svc, internalApiKey: undefined });
    const caller = new AbortController();
    reads = 0;
    const opts = {
      boundedByCaller: true,
      timeoutMs: 5000,
      get signal() {
        reads++;
        return caller.signal;
      },
    };
    await inv.analyze('echo', email, opts);
    expect(seenSignal).toBe(caller.signal);
    expect(reads).toBe(1);
    const other = service({ analyzers: { echo: { enabled: true, settings: { word: 'quiet' } } } });
    const inv2 = createEmbeddedInvoker({
      builtins,
      service: () => other,
      internalApiKey: undefined,
    });
    await inv2.analyze('echo', email, opts);
    expect(reads).toBe(1);
  });

  it("a provider's answer carries the provider's own id", async () => {
    const svc = service();
    const inv = createEmbeddedInvoker({ builtins, service: () => svc, internalApiKey: undefined });
    expect(await inv.enrich('domains', { email, stage: 's', workflow_id: 'w' })).toEqual({
      provider_id: 'domains',
      data: { stage: 's' },
    });
  });
});

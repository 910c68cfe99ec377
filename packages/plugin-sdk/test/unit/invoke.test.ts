import { Email } from '@trawl/contracts';
import { describe, expect, it } from 'vitest';
import { invokeAnalyzer, invokeProvider, resolveSettings } from '../../src/index.ts';
import {
  brokenAnalyzer,
  domainProvider,
  echoAnalyzer,
  slowAnalyzer,
  validEmail,
} from './fixtures.ts';

const email = Email.parse(validEmail);

describe('in-process invocation', () => {
  it('runs an analyzer with default settings and fills the summary', async () => {
    const a = await invokeAnalyzer(echoAnalyzer, email, undefined, new AbortController().signal);
    expect(a).toMatchObject({ is_phishing: true, confidence: 0.8, summary: '' });
  });

  it('rejects invalid settings with JSON pointers', () => {
    expect(() => resolveSettings(echoAnalyzer, { word: 3 })).toThrow(/\/settings\/word/);
  });

  it('rejects an invalid answer', async () => {
    await expect(
      invokeAnalyzer(brokenAnalyzer, email, {}, new AbortController().signal),
    ).rejects.toMatchObject({ code: 'TRAWL_ERR_PLUGIN_INVALID_ANSWER' });
  });

  it('stops waiting when the signal aborts', async () => {
    await expect(
      invokeAnalyzer(slowAnalyzer, email, {}, AbortSignal.timeout(20)),
    ).rejects.toBeDefined();
  });

  it('runs a provider', async () => {
    const r = await invokeProvider(
      domainProvider,
      { email, stage: 's', workflow_id: 'w' },
      { internal: ['evil.example.com'] },
      new AbortController().signal,
    );
    expect(r).toEqual({ provider_id: 'domains', data: { sender_internal: true, stage: 's' } });
  });
});

import { ServiceConfigFile } from '@trawl/contracts';
import { pluginTargets } from '@trawl/plugin-client';
import { describe, expect, it } from 'vitest';
import { analyzerCacheKey, emailHash } from '../../src/analyzer-cache.ts';
import { snapshotFromFiles } from '../../src/index.ts';
import { email } from './helpers.ts';

const service = ServiceConfigFile.parse({
  analyzer: { timeout_ms: 1234 },
  analyzers: {
    headers: { settings: { cache_ttl_seconds: 60 } },
    urls: { enabled: false },
    llm: { url: 'http://llm.internal:9000/llm', settings: { cache_ttl_seconds: 0 } },
  },
  plugins: {
    analyzers: {
      vt: { enabled: true, url: 'http://vt:8000/vt', settings: { cache_ttl_seconds: 5 } },
    },
    context_providers: {
      dir: { enabled: true, url: 'http://dir:8000/dir' },
      off: { enabled: false, url: 'http://off:8000/off' },
    },
  },
});

describe('configuration snapshot', () => {
  it('reads cache TTLs, timeouts and per-analyzer versions', () => {
    const s = snapshotFromFiles({
      version: 'v9',
      service,
      workflows: [],
      analyzerVersions: { headers: 'h1' },
    });
    expect(s.version).toBe('v9');
    expect(s.analyzerTimeoutMs).toBe(1234);
    expect(s.analyzerCacheTtl('headers')).toBe(60);
    expect(s.analyzerCacheTtl('llm')).toBe(0);
    expect(s.analyzerCacheTtl('vt')).toBe(5);
    expect(s.analyzerCacheTtl('unknown')).toBe(0);
    expect(s.analyzerVersion('headers')).toBe('h1');
    expect(s.analyzerVersion('vt')).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe('plugin targets', () => {
  it('maps form A (built-in base or own url) and form B entries; leaves disabled ones out', () => {
    expect(pluginTargets(service, 'http://analyzers:8100/')).toEqual({
      analyzers: {
        headers: { url: 'http://analyzers:8100/headers' },
        llm: { url: 'http://llm.internal:9000/llm' },
        vt: { url: 'http://vt:8000/vt' },
      },
      providers: { dir: { url: 'http://dir:8000/dir' } },
    });
  });
});

describe('analyzer cache key', () => {
  it('ignores analysis_context and key order', () => {
    const a = emailHash(email);
    const b = emailHash({
      body_text: email.body_text,
      headers: { ...email.headers },
      analysis_context: { s1: { providers: {}, analyzers: {} } },
    } as typeof email);
    expect(a).toBe(b);
    expect(emailHash({ ...email, body_text: 'other' })).not.toBe(a);
    expect(analyzerCacheKey('llm', 'v1', a)).toBe(`acache:llm:v1:${a}`);
  });
});

import { AnalyzerAnswer, ProblemDetails } from '@trawl/contracts';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createPluginApp } from '../../src/index.ts';
import {
  brokenAnalyzer,
  domainProvider,
  echoAnalyzer,
  slowAnalyzer,
  throwingAnalyzer,
  validEmail,
} from './fixtures.ts';

const post = (url: string, payload: unknown, headers: Record<string, string> = {}) => ({
  method: 'POST' as const,
  url,
  payload: payload as object,
  headers,
});

describe('createPluginApp', () => {
  it('serves a single plugin at its base path and at the root', async () => {
    const app = createPluginApp({ plugins: [echoAnalyzer] });
    for (const url of ['/echo/internal/analyze', '/internal/analyze']) {
      const res = await app.inject(post(url, validEmail));
      expect(res.statusCode).toBe(200);
      const answer = AnalyzerAnswer.parse(res.json());
      expect(answer.is_phishing).toBe(true);
      expect(answer.indicators[0]?.type).toBe('urgency_language');
    }
    const health = await app.inject({ method: 'GET', url: '/health' });
    expect(health.json()).toMatchObject({ status: 'ok', id: 'echo', kind: 'analyzer' });
  });

  it('applies settings from the settings source over the schema defaults', async () => {
    const app = createPluginApp({
      plugins: [echoAnalyzer],
      settingsSource: { echo: { word: 'invoice' } },
    });
    const res = await app.inject(post('/internal/analyze', validEmail));
    expect(res.json()).toMatchObject({ is_phishing: false, confidence: 0.8 });
  });

  it('describes settings as JSON Schema in /capabilities', async () => {
    const app = createPluginApp({ plugins: [echoAnalyzer, domainProvider] });
    const res = await app.inject({ method: 'GET', url: '/echo/capabilities' });
    const caps = res.json();
    expect(caps).toMatchObject({ id: 'echo', version: '1.2.3', kind: 'analyzer' });
    expect(caps.settings.properties.word).toMatchObject({ type: 'string', default: 'verify' });
    // several plugins: no root /internal routes, a root health listing them
    expect((await app.inject(post('/internal/analyze', validEmail))).statusCode).toBe(404);
    const health = (await app.inject({ method: 'GET', url: '/health' })).json();
    expect(health.plugins.map((p: { id: string }) => p.id)).toEqual(['echo', 'domains']);
  });

  it('answers 422 problem details with JSON pointers for an invalid Email', async () => {
    const app = createPluginApp({ plugins: [echoAnalyzer] });
    const res = await app.inject(
      post('/internal/analyze', { headers: { subject: 'x', sender: 'nope', recipients: [] } }),
    );
    expect(res.statusCode).toBe(422);
    expect(res.headers['content-type']).toContain('application/problem+json');
    const p = ProblemDetails.parse(res.json());
    const paths = p.errors?.map((e) => e.path) ?? [];
    expect(paths).toContain('/headers/sender');
    expect(paths).toContain('/headers/recipients');
    expect(paths).toContain('/headers/date');
    expect(p.code).toBe('TRAWL_ERR_VALIDATION');
  });

  it('answers 400 problem details for malformed JSON', async () => {
    const app = createPluginApp({ plugins: [echoAnalyzer] });
    const res = await app.inject({
      method: 'POST',
      url: '/internal/analyze',
      payload: '{"headers":',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode).toBe(400);
    expect(ProblemDetails.parse(res.json()).status).toBe(400);
  });

  it('answers 500 with a clear message when the plugin returns an invalid answer', async () => {
    const app = createPluginApp({ plugins: [brokenAnalyzer] });
    const res = await app.inject(post('/internal/analyze', validEmail));
    expect(res.statusCode).toBe(500);
    const p = ProblemDetails.parse(res.json());
    expect(p.code).toBe('TRAWL_ERR_PLUGIN_INVALID_ANSWER');
    expect(p.detail).toContain("plugin 'broken' returned an invalid answer");
    expect(p.detail).toContain('/is_phishing');
  });

  it('hides the message of an unexpected error', async () => {
    const app = createPluginApp({ plugins: [throwingAnalyzer] });
    const res = await app.inject(post('/internal/analyze', validEmail));
    expect(res.statusCode).toBe(500);
    expect(res.body).not.toContain('hunter2');
    expect(res.json().code).toBe('TRAWL_ERR_PLUGIN_FAILED');
  });

  it('requires the internal key on /internal routes only when configured', async () => {
    const app = createPluginApp({ plugins: [echoAnalyzer], internalApiKey: 's3cret-key' });
    const none = await app.inject(post('/internal/analyze', validEmail));
    expect(none.statusCode).toBe(401);
    expect(ProblemDetails.parse(none.json()).code).toBe('TRAWL_ERR_UNAUTHORIZED');
    const wrong = await app.inject(
      post('/internal/analyze', validEmail, { 'x-internal-api-key': 's3cret-kez' }),
    );
    expect(wrong.statusCode).toBe(401);
    const ok = await app.inject(
      post('/internal/analyze', validEmail, { 'x-internal-api-key': 's3cret-key' }),
    );
    expect(ok.statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
  });

  it('turns X-Trawl-Timeout-Ms into an abort and answers 504', async () => {
    const app = createPluginApp({ plugins: [slowAnalyzer] });
    const res = await app.inject(
      post('/internal/analyze', validEmail, { 'x-trawl-timeout-ms': '50' }),
    );
    expect(res.statusCode).toBe(504);
    expect(res.json().code).toBe('TRAWL_ERR_PLUGIN_TIMEOUT');
  });

  it('serves context providers on /internal/enrich with provider_id filled in', async () => {
    const app = createPluginApp({ plugins: [domainProvider] });
    const res = await app.inject(
      post('/internal/enrich', { email: validEmail, stage: 'triage', workflow_id: 'default' }),
    );
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      provider_id: 'domains',
      data: { sender_internal: false, stage: 'triage' },
    });
    const bad = await app.inject(post('/internal/enrich', { email: validEmail }));
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors.map((e: { path: string }) => e.path)).toEqual([
      '/stage',
      '/workflow_id',
    ]);
  });

  it('counts calls in /metrics', async () => {
    const registry = new Registry();
    const app = createPluginApp({ plugins: [echoAnalyzer], registry });
    await app.inject(post('/internal/analyze', validEmail));
    await app.inject(post('/internal/analyze', {}));
    const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(text).toContain('trawl_plugin_requests_total{plugin="echo",status="200"} 1');
    expect(text).toContain('trawl_plugin_requests_total{plugin="echo",status="422"} 1');
    expect(text).toContain('trawl_plugin_duration_seconds_count{plugin="echo"} 2');
  });

  it('answers 404 problem details on unknown routes and refuses duplicate ids', async () => {
    const app = createPluginApp({ plugins: [echoAnalyzer] });
    const res = await app.inject({ method: 'GET', url: '/nope' });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('TRAWL_ERR_NOT_FOUND');
    expect(() => createPluginApp({ plugins: [echoAnalyzer, echoAnalyzer] })).toThrow(/twice/);
  });
});

import {
  AnalyzerAnswer,
  type EmailInput,
  EnrichmentResult,
  ProblemDetails,
} from '@trawl/contracts';
import type { FastifyInstance } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { INTERNAL_KEY_HEADER, TIMEOUT_HEADER } from '../app.ts';
import { type ConformanceClient, httpClient, injectClient } from './client.ts';
import { SAMPLE_EMAIL } from './sample-email.ts';

type Lazy<T> = T | (() => T | Promise<T>);

export interface ConformanceOptions {
  /** Name of the describe block. */
  name: string;
  /** The plugin's base URL of a running service, e.g. `http://127.0.0.1:8100/llm`. */
  baseUrl?: Lazy<string>;
  /** Or an app built with createPluginApp, tested in-process with `inject`. */
  app?: Lazy<FastifyInstance>;
  /** Path prefix inside `app` (e.g. `/llm` when the app serves several plugins). Default ''. */
  basePath?: string;
  kind: 'analyzer' | 'context_provider';
  /** Expected id in /capabilities (checked when given). */
  id?: string;
  /** The Email to analyse; a small phishing-like sample when absent. */
  sampleEmail?: EmailInput;
  /** The service's internal key; enables the 401 checks and is sent on every other call. */
  internalApiKey?: string;
  /** Value of X-Trawl-Timeout-Ms on the deadline check. Default 5000. */
  timeoutMs?: number;
}

async function resolve<T>(v: Lazy<T>): Promise<T> {
  return typeof v === 'function' ? await (v as () => T | Promise<T>)() : v;
}

function expectProblem(res: { status: number; headers: Record<string, string>; body: unknown }) {
  expect(res.headers['content-type'] ?? '').toContain('application/problem+json');
  const p = ProblemDetails.safeParse(res.body);
  expect(p.success, `problem details shape: ${JSON.stringify(res.body)}`).toBe(true);
  expect(p.data?.status).toBe(res.status);
  return p.data as ProblemDetails;
}

/**
 * Declares vitest tests checking that a plugin honours Trawl's wire contract. Call it at the top
 * level of a test file (it declares a `describe`).
 */
export function pluginConformance(opts: ConformanceOptions): void {
  const timeoutMs = opts.timeoutMs ?? 5000;
  const route = opts.kind === 'analyzer' ? '/internal/analyze' : '/internal/enrich';
  const email = opts.sampleEmail ?? SAMPLE_EMAIL;
  const validBody =
    opts.kind === 'analyzer' ? email : { email, stage: 'conformance', workflow_id: 'conformance' };
  const badEmail = { headers: { subject: 1, sender: 'not-an-address', recipients: [] } };
  const invalidBody =
    opts.kind === 'analyzer' ? badEmail : { email: badEmail, stage: 's', workflow_id: 'w' };
  const keyHeaders: Record<string, string> = opts.internalApiKey
    ? { [INTERNAL_KEY_HEADER]: opts.internalApiKey }
    : {};

  describe(`plugin conformance: ${opts.name}`, () => {
    let client: ConformanceClient;
    beforeAll(async () => {
      if (opts.app !== undefined) {
        const app = await resolve(opts.app);
        await app.ready();
        client = injectClient(app, opts.basePath ?? '');
      } else if (opts.baseUrl !== undefined) {
        client = httpClient(await resolve(opts.baseUrl));
      } else {
        throw new Error('pluginConformance needs baseUrl or app');
      }
    });

    it('GET /health answers 200 with status ok', async () => {
      const res = await client.request('GET', '/health');
      expect(res.status).toBe(200);
      expect((res.body as { status?: unknown }).status).toBe('ok');
    });

    it('GET /capabilities describes the plugin', async () => {
      const res = await client.request('GET', '/capabilities');
      expect(res.status).toBe(200);
      const caps = res.body as Record<string, unknown>;
      expect(typeof caps.id).toBe('string');
      if (opts.id) expect(caps.id).toBe(opts.id);
      expect(typeof caps.version).toBe('string');
      expect(caps.kind).toBe(opts.kind);
      expect(typeof caps.description).toBe('string');
      expect(caps.settings).toBeTypeOf('object');
    });

    it(`POST ${route} with a valid request answers a valid ${opts.kind === 'analyzer' ? 'AnalyzerAnswer' : 'EnrichmentResult'}`, async () => {
      const res = await client.request('POST', route, { headers: keyHeaders, body: validBody });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const schema = opts.kind === 'analyzer' ? AnalyzerAnswer : EnrichmentResult;
      const parsed = schema.safeParse(res.body);
      expect(parsed.success, parsed.success ? '' : JSON.stringify(parsed.error.issues)).toBe(true);
      if (opts.kind === 'context_provider' && opts.id) {
        expect((res.body as { provider_id?: unknown }).provider_id).toBe(opts.id);
      }
    });

    it(`POST ${route} with an invalid Email answers 422 problem details with JSON pointers`, async () => {
      const res = await client.request('POST', route, { headers: keyHeaders, body: invalidBody });
      expect(res.status).toBe(422);
      const p = expectProblem(res);
      expect(p.errors?.length ?? 0).toBeGreaterThan(0);
      for (const e of p.errors ?? []) expect(e.path).toMatch(/^\//);
    });

    it.skipIf(!opts.internalApiKey)(
      `POST ${route} without the internal key answers 401`,
      async () => {
        const missing = await client.request('POST', route, { body: validBody });
        expect(missing.status).toBe(401);
        expectProblem(missing);
        const wrong = await client.request('POST', route, {
          headers: { [INTERNAL_KEY_HEADER]: `${opts.internalApiKey}-wrong` },
          body: validBody,
        });
        expect(wrong.status).toBe(401);
      },
    );

    it(
      `POST ${route} answers within the ${TIMEOUT_HEADER} deadline`,
      async () => {
        const res = await client.request('POST', route, {
          headers: { ...keyHeaders, [TIMEOUT_HEADER]: String(timeoutMs) },
          body: validBody,
        });
        expect([200, 504]).toContain(res.status);
        if (res.status === 504) expectProblem(res);
      },
      timeoutMs + 10_000,
    );

    it('an unknown route answers 404 problem details', async () => {
      const res = await client.request('GET', '/no-such-route-for-conformance');
      expect(res.status).toBe(404);
      expectProblem(res);
    });
  });
}

import { JobSearchQuery } from '@trawl/contracts';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  hostileBytes,
  hostileJson,
  hostileMessage,
  hostileText,
} from '../../../../test/support/hostile-arbitraries.ts';
import { RAW_MESSAGE, sampleEmail } from '../fixtures/email.ts';
import {
  bearer,
  type Gateway,
  login,
  type RealPlatform,
  seedUsers,
  startGateway,
} from '../helpers/harness.ts';
import { realPlatform } from '../helpers/real-platform.ts';

/**
 * Property tests of the gateway's decoders of request input (issue 28), on the real PostgreSQL,
 * Redis and RabbitMQ: search filters and cursors in query strings, JSON bodies, raw messages and
 * token forms, with NUL, bare CR, overlong values and invalid UTF-8 among them. Whatever is sent,
 * the answer is never a 5xx: a 4xx problem naming the field, or the work done.
 */

/** Every byte percent-encoded: NUL, invalid UTF-8 and separators reach the decoder as sent. */
const pct = (b: Buffer) => [...b].map((x) => `%${x.toString(16).padStart(2, '0')}`).join('');

const SEARCH_KEYS = Object.keys(JobSearchQuery.shape);

function query(keys: readonly string[]): fc.Arbitrary<string> {
  return fc
    .array(
      fc.tuple(
        fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...keys) }, hostileBytes(2).map(pct)),
        hostileBytes(8),
      ),
      { maxLength: 5 },
    )
    .map((pairs) => pairs.map(([k, v]) => `${k}=${pct(v)}`).join('&'));
}

describe('fuzz: the gateway never answers 5xx to hostile input', () => {
  let p: RealPlatform;
  let gw: Gateway;
  const tok: Record<string, string> = {};

  beforeAll(async () => {
    p = await realPlatform();
    await seedUsers(p.store);
    gw = await startGateway(p);
    for (const u of ['viewer', 'analyst', 'admin']) tok[u] = (await login(gw.app, u)).access_token;
  });
  afterAll(async () => {
    await gw?.close();
    await p?.cleanup();
  });

  const below500 = (what: string, r: { statusCode: number; body: string }) =>
    expect(r.statusCode, `${what} -> ${r.statusCode} ${r.body.slice(0, 300)}`).toBeLessThan(500);

  it('search filters and cursors of the list routes', async () => {
    const routes = [
      { url: '/api/v1/analyze', who: 'viewer', keys: SEARCH_KEYS },
      { url: '/api/v1/audit', who: 'admin', keys: ['actor', 'action', 'limit', 'cursor'] },
      { url: '/api/v1/campaigns', who: 'viewer', keys: ['limit', 'cursor', 'since', 'status'] },
    ];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), query(SEARCH_KEYS), async (route, q) => {
        const url = `${route.url}?${q}`;
        const r = await gw.app.inject({
          method: 'GET',
          url,
          headers: bearer(tok[route.who] ?? ''),
        });
        below500(url, r);
      }),
      { numRuns: 150 },
    );
  });

  it('JSON bodies: an Email, a workflow, a webhook, a user, feedback', async () => {
    const email = sampleEmail();
    const mutatedEmail = fc
      .tuple(
        fc.constantFrom(
          'subject',
          'sender',
          'date',
          'body_text',
          'body_html',
          'language',
          'source',
        ),
        fc.oneof(hostileText(10), hostileJson),
      )
      .map(([field, v]) =>
        field in email.headers
          ? { email: { ...email, headers: { ...email.headers, [field]: v } } }
          : { email: { ...email, [field]: v } },
      );
    const routes = [
      {
        method: 'POST' as const,
        url: '/api/v1/analyze',
        who: 'analyst',
        body: fc.oneof(mutatedEmail, hostileJson),
      },
      {
        method: 'POST' as const,
        url: '/api/v1/workflows/validate',
        who: 'analyst',
        body: hostileJson,
      },
      {
        method: 'POST' as const,
        url: '/api/v1/webhooks',
        who: 'admin',
        body: fc.oneof(
          hostileJson,
          hostileText(10).map((description) => ({
            url: 'http://127.0.0.1:9/hook',
            events: ['job.completed'],
            description,
          })),
        ),
      },
      { method: 'POST' as const, url: '/api/v1/users', who: 'admin', body: hostileJson },
      {
        method: 'POST' as const,
        url: '/api/v1/analyze/00000000-0000-4000-8000-000000000000/feedback',
        who: 'analyst',
        body: fc.oneof(
          hostileJson,
          hostileText(10).map((note) => ({ verdict: 'phishing', note })),
        ),
      },
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes).chain((r) => r.body.map((body) => ({ ...r, body }))),
        async (r) => {
          const res = await gw.app.inject({
            method: r.method,
            url: r.url,
            headers: { ...bearer(tok[r.who] ?? ''), 'content-type': 'application/json' },
            payload: JSON.stringify(r.body) ?? 'null',
          });
          below500(`${r.method} ${r.url}`, res);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('raw JSON text that is not JSON, and raw messages', async () => {
    await fc.assert(
      fc.asyncProperty(hostileBytes(30), async (bytes) => {
        const res = await gw.app.inject({
          method: 'POST',
          url: '/api/v1/analyze',
          headers: { ...bearer(tok.analyst ?? ''), 'content-type': 'application/json' },
          payload: bytes,
        });
        below500('POST /api/v1/analyze (bytes)', res);
      }),
      { numRuns: 100 },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          hostileMessage,
          hostileBytes(40).map((b) => Buffer.concat([Buffer.from(RAW_MESSAGE), b])),
        ),
        async (raw) => {
          const res = await gw.app.inject({
            method: 'POST',
            url: '/api/v1/analyze/raw',
            headers: { ...bearer(tok.analyst ?? ''), 'content-type': 'message/rfc822' },
            payload: raw,
          });
          below500('POST /api/v1/analyze/raw', res);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('token forms, unauthenticated', async () => {
    await fc.assert(
      fc.asyncProperty(hostileBytes(6), hostileBytes(6), async (user, password) => {
        const res = await gw.app.inject({
          method: 'POST',
          url: '/auth/token',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: `grant_type=password&username=${pct(user)}&password=${pct(password)}`,
        });
        below500('POST /auth/token', res);
      }),
      // each attempt may cost a scrypt hash: few runs
      { numRuns: 15 },
    );
  });
});

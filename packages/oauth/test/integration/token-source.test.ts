import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createApiClient,
  createTokenSource,
  OAUTH_ERRORS,
  type OAuthError,
} from '../../src/index.ts';
import {
  sendJson,
  startTestHttpServer,
  startTestTokenServer,
  type TestCertificate,
  type TestKeyPair,
  type TestTokenServer,
  testCertificate,
  testKeyPair,
} from '../../src/testing/index.ts';

const TENANT = 'contoso.example';
const GRAPH = 'https://graph.microsoft.com/.default';
const GMAIL = 'https://www.googleapis.com/auth/gmail.modify';

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return (err as OAuthError).code;
  }
  return 'resolved';
}

describe('OAuth 2.0 token sources against a local token server', () => {
  let ts: TestTokenServer;
  let cert: TestCertificate;
  let sa: TestKeyPair;

  beforeAll(async () => {
    ts = await startTestTokenServer();
    cert = testCertificate();
    sa = testKeyPair();
    ts.registerApp({ tenant: TENANT, clientId: 'app-secret', secret: 's3cret-value' });
    ts.registerApp({ tenant: TENANT, clientId: 'app-cert', certificatePem: cert.certificatePem });
    ts.registerServiceAccount({
      email: 'trawl@project.iam.example',
      publicKeyPem: sa.publicKeyPem,
      keyId: 'k1',
      delegate: [{ subject: 'reports@corp.example', scopes: [GMAIL] }],
    });
    ts.registerRefreshToken({
      token: 'rt-1',
      clientId: 'web-client',
      clientSecret: 'web-secret',
      subject: 'dana@corp.example',
      scope: GMAIL,
    });
  });
  afterAll(async () => ts?.close());

  it('client credentials with a secret: one request serves every caller until near expiry', async () => {
    let t = Date.now();
    const src = createTokenSource(
      {
        kind: 'client_secret',
        token_url: ts.microsoftTokenUrl(TENANT),
        client_id: 'app-secret',
        client_secret: 's3cret-value',
        scope: GRAPH,
      },
      { now: () => t },
    );
    const before = ts.stats.issued;
    const tokens = await Promise.all([src.token(), src.token(), src.token()]);
    expect(new Set(tokens).size).toBe(1);
    expect(ts.validate(tokens[0]!)).toMatchObject({ client: 'app-secret', scope: GRAPH });
    expect(ts.stats.issued - before).toBe(1);
    // 55 minutes on, within the last 5 minutes of its hour: replaced before it expires
    t += 56 * 60_000;
    const next = await src.token();
    expect(next).not.toBe(tokens[0]);
    expect(ts.stats.issued - before).toBe(2);
  });

  it.each(['RS256', 'PS256'] as const)(
    'client credentials with a certificate: a %s client assertion (RFC 7523)',
    async (alg) => {
      const src = createTokenSource({
        kind: 'client_certificate',
        token_url: ts.microsoftTokenUrl(TENANT),
        client_id: 'app-cert',
        private_key: cert.privateKeyPem,
        certificate: cert.certificatePem,
        scope: GRAPH,
        alg,
      });
      expect(ts.validate(await src.token())).toMatchObject({ client: 'app-cert' });
    },
  );

  it('a certificate the app does not have is refused as invalid_client (AADSTS700027)', async () => {
    const other = testCertificate('someone-else');
    const src = createTokenSource({
      kind: 'client_certificate',
      token_url: ts.microsoftTokenUrl(TENANT),
      client_id: 'app-cert',
      private_key: other.privateKeyPem,
      certificate: other.certificatePem,
      scope: GRAPH,
    });
    const err = (await src.token().catch((e) => e)) as OAuthError;
    expect(err.code).toBe(OAUTH_ERRORS.invalidClient);
    expect(err.aadsts).toBe(700027);
    expect(err.needsAdmin).toBe(true);
  });

  it('names each Microsoft refusal: wrong secret, unknown app, unknown tenant, revoked consent', async () => {
    const grant = (o: Partial<{ tenant: string; id: string; secret: string }>) =>
      createTokenSource(
        {
          kind: 'client_secret',
          token_url: ts.microsoftTokenUrl(o.tenant ?? TENANT),
          client_id: o.id ?? 'app-secret',
          client_secret: o.secret ?? 's3cret-value',
          scope: GRAPH,
        },
        { holdFailureMs: 0 },
      );
    expect(await codeOf(grant({ secret: 'the-secret-id' }).token())).toBe(
      OAUTH_ERRORS.invalidClient,
    );
    expect(await codeOf(grant({ id: 'nope' }).token())).toBe(OAUTH_ERRORS.appNotFound);
    expect(await codeOf(grant({ tenant: 'other.example' }).token())).toBe(
      OAUTH_ERRORS.tenantNotFound,
    );
    ts.setConsent('app-secret', false);
    const err = (await grant({})
      .token()
      .catch((e) => e)) as OAuthError;
    expect(err.code).toBe(OAUTH_ERRORS.consentRequired);
    expect(err.aadsts).toBe(65001);
    // the secret never appears in what the error says
    expect(JSON.stringify({ m: err.message })).not.toContain('s3cret-value');
    ts.setConsent('app-secret', true);
    expect(await codeOf(grant({}).token())).toBe('resolved');
  });

  it('Google service account: JWT bearer grant with sub; a subject not delegated is unauthorized_client', async () => {
    const make = (subject: string) =>
      createTokenSource({
        kind: 'service_account',
        token_url: ts.googleTokenUrl,
        client_email: 'trawl@project.iam.example',
        private_key: sa.privateKeyPem,
        private_key_id: 'k1',
        scope: GMAIL,
        subject,
      });
    const t = await make('reports@corp.example').token();
    expect(ts.validate(t)).toMatchObject({ subject: 'reports@corp.example', scope: GMAIL });
    const err = (await make('ceo@corp.example')
      .token()
      .catch((e) => e)) as OAuthError;
    expect(err.code).toBe(OAUTH_ERRORS.consentRequired);
    expect(err.oauthError).toBe('unauthorized_client');
    expect(err.message).toMatch(/domain-wide delegation/);
  });

  it("a user's refresh token; revoked, it is invalid_grant", async () => {
    const src = createTokenSource(
      {
        kind: 'refresh_token',
        token_url: ts.googleTokenUrl,
        client_id: 'web-client',
        client_secret: 'web-secret',
        refresh_token: 'rt-1',
      },
      { holdFailureMs: 0 },
    );
    expect(ts.validate(await src.token())?.subject).toBe('dana@corp.example');
    ts.setConsent('web-client', false);
    src.invalidate();
    expect(await codeOf(src.token())).toBe(OAUTH_ERRORS.invalidGrant);
    ts.setConsent('web-client', true);
  });

  it('a token endpoint that is down is unavailable, and held briefly (no hammering)', async () => {
    const src = createTokenSource(
      {
        kind: 'client_secret',
        token_url: ts.microsoftTokenUrl(TENANT),
        client_id: 'app-secret',
        client_secret: 's3cret-value',
        scope: GRAPH,
      },
      { holdFailureMs: 60_000 },
    );
    ts.failNext(1, 503);
    const before = ts.stats.requests;
    expect(await codeOf(src.token())).toBe(OAUTH_ERRORS.unavailable);
    expect(await codeOf(src.token())).toBe(OAUTH_ERRORS.unavailable);
    expect(ts.stats.requests - before).toBe(1);
  });

  it('reads at most 64 KiB of a token answer', async () => {
    const huge = await startTestHttpServer((_req, res) =>
      sendJson(res, 200, { access_token: 'x', padding: 'y'.repeat(200_000) }),
    );
    try {
      const src = createTokenSource({
        kind: 'client_secret',
        token_url: `${huge.url}/token`,
        client_id: 'a',
        client_secret: 'b',
        scope: 'c',
      });
      expect(await codeOf(src.token())).toBe(OAUTH_ERRORS.badAnswer);
    } finally {
      await huge.close();
    }
  });

  it('the API client takes a new token on 401 and waits out 429 Retry-After', async () => {
    let calls = 0;
    const seen: string[] = [];
    const api = await startTestHttpServer((req, res) => {
      calls += 1;
      const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      if (!ts.validate(token))
        return sendJson(res, 401, { error: { code: 'InvalidAuthenticationToken' } });
      seen.push(token);
      if (calls === 3)
        return sendJson(res, 429, { error: { code: 'TooManyRequests' } }, { 'retry-after': '1' });
      sendJson(res, 200, { ok: true });
    });
    try {
      const tokens = createTokenSource({
        kind: 'client_secret',
        token_url: ts.microsoftTokenUrl(TENANT),
        client_id: 'app-secret',
        client_secret: 's3cret-value',
        scope: GRAPH,
      });
      const waits: number[] = [];
      const client = createApiClient({
        baseUrl: api.url,
        tokens,
        sleep: async (ms) => {
          waits.push(ms);
        },
      });
      expect((await client.request({ url: '/a', what: 'a' })).json()).toEqual({ ok: true });
      ts.expireAll();
      const r = await client.request({ url: '/b', what: 'b' });
      expect(r.status).toBe(200);
      expect(waits).toEqual([1000]);
      expect(new Set(seen).size).toBe(2);
      // throttled on every attempt: fails with the API's Retry-After
      const always = await startTestHttpServer((_req, res) =>
        sendJson(res, 429, {}, { 'retry-after': '7' }),
      );
      const c2 = createApiClient({
        baseUrl: always.url,
        tokens,
        sleep: async () => {},
        maxAttempts: 3,
      });
      const err = (await c2.request({ url: '/', what: 'list' }).catch((e) => e)) as {
        code: string;
        retryAfterSeconds: number;
      };
      expect(err.code).toBe(OAUTH_ERRORS.apiThrottled);
      expect(err.retryAfterSeconds).toBe(7);
      await always.close();
    } finally {
      await api.close();
    }
  });
});

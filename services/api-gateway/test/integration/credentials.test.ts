import { readFileSync, writeFileSync } from 'node:fs';
import { deriveCredential, type PartyKind } from '@trawl/contracts';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RAW_MESSAGE, sampleEmail } from '../fixtures/email.ts';
import {
  bearer,
  configDir,
  type Gateway,
  INTERNAL_KEY,
  login,
  type RealPlatform,
  seedUsers,
  startGateway,
} from '../helpers/harness.ts';
import { realPlatform } from '../helpers/real-platform.ts';

/**
 * Issue 15, least privilege: each plugin and retriever holds its own credential (derived from the
 * platform key), which grants only what it needs; the platform key, given to a plugin as it once
 * was, no longer reads plugin settings, lists jobs or speaks for a retriever; secrets in settings
 * go only to their plugin. Real PostgreSQL, Redis and RabbitMQ.
 */

const cred = (kind: PartyKind, id: string) => deriveCredential(INTERNAL_KEY, { kind, id });
const key = (k: string) => ({ 'x-internal-api-key': k });
const rawHeaders = { 'content-type': 'message/rfc822' };

const PLUGINS_YAML = `
    vendor-a:
      enabled: true
      url: http://127.0.0.1:9/vendor-a
      settings:
        llm_api_key: sk-vendor-a-secret
        max_tokens: 512
        vendor: { apiToken: tok-a-secret, region: eu }
        api_key_file: /run/secrets/vendor-a
    vendor-b:
      enabled: true
      url: http://127.0.0.1:9/vendor-b
      settings:
        password: pw-vendor-b-secret
        threshold: 0.7
`;

describe('per-party credentials at the gateway', () => {
  let p: RealPlatform;
  let gw: Gateway;
  let app: FastifyInstance;
  let admin: Record<string, string>;
  const cfg = configDir();

  beforeAll(async () => {
    const yaml = readFileSync(cfg.configFile, 'utf8').replace(
      /^plugins:\n {2}analyzers:\n/m,
      `plugins:\n  analyzers:${PLUGINS_YAML}`,
    );
    expect(yaml).toContain('vendor-b');
    writeFileSync(cfg.configFile, yaml);
    p = await realPlatform();
    await seedUsers(p.store);
    gw = await startGateway(p, { cfg });
    app = gw.app;
    admin = bearer((await login(app, 'admin')).access_token);
  });

  afterAll(async () => {
    await gw?.close();
    await p?.cleanup();
    cfg.remove();
  });

  const get = (url: string, headers: Record<string, string>) =>
    app.inject({ method: 'GET', url, headers });
  const raw = (headers: Record<string, string>) =>
    app.inject({
      method: 'POST',
      url: '/api/v1/analyze/raw',
      headers: { ...rawHeaders, ...headers },
      payload: RAW_MESSAGE,
    });
  const code = (r: LightMyRequestResponse) => (r.json() as { code?: string }).code;
  const originOf = async (jobId: string) => {
    const o = (
      await p.sql.query<{ origin: unknown }>('SELECT origin FROM jobs WHERE job_id = $1', [jobId])
    ).rows[0]?.origin;
    return typeof o === 'string' ? JSON.parse(o) : o;
  };

  describe("plugin A's credential", () => {
    const a = key(cred('plugin', 'vendor-a'));

    it('reads its own settings, secrets included', async () => {
      const r = await get('/api/v1/config/analyzers/vendor-a', a);
      expect(r.statusCode, r.body).toBe(200);
      expect(r.json().settings).toEqual({
        llm_api_key: 'sk-vendor-a-secret',
        max_tokens: 512,
        vendor: { apiToken: 'tok-a-secret', region: 'eu' },
        api_key_file: '/run/secrets/vendor-a',
      });
    });

    it("cannot read plugin B's settings (403), nor learn whether an id exists", async () => {
      const b = await get('/api/v1/config/analyzers/vendor-b', a);
      expect(b.statusCode).toBe(403);
      expect(code(b)).toBe('TRAWL_ERR_AUTH_NOT_OWNER');
      expect(b.body).not.toContain('pw-vendor-b-secret');
      const none = await get('/api/v1/config/analyzers/no-such-plugin', a);
      expect(none.statusCode).toBe(403);
    });

    it('cannot list or read jobs, submit mail, or speak as a retriever', async () => {
      expect((await get('/api/v1/analyze', a)).statusCode).toBe(403);
      const job = await app.inject({
        method: 'POST',
        url: '/api/v1/analyze',
        headers: admin,
        payload: { email: sampleEmail() },
      });
      expect(job.statusCode).toBe(200);
      expect((await get(`/api/v1/analyze/${job.json().job_id}`, a)).statusCode).toBe(403);
      expect(
        (
          await app.inject({
            method: 'POST',
            url: '/api/v1/analyze',
            headers: a,
            payload: { email: sampleEmail() },
          })
        ).statusCode,
      ).toBe(403);
      const forged = await raw({
        ...a,
        'x-trawl-retriever': 'imap',
        'x-trawl-message-id': '1:1',
      });
      expect(forged.statusCode).toBe(403);
      expect((await get('/api/v1/config', a)).statusCode).toBe(403);
      expect((await get('/api/v1/workflows', a)).statusCode).toBe(403);
    });

    it('a credential with a forged MAC, or derived from another platform key, is refused (401)', async () => {
      const mine = cred('plugin', 'vendor-a');
      const tampered = `${mine.slice(0, -2)}${mine.endsWith('AA') ? 'BB' : 'AA'}`;
      expect((await get('/api/v1/config/analyzers/vendor-a', key(tampered))).statusCode).toBe(401);
      const renamed = mine.replace(
        Buffer.from('vendor-a').toString('base64url'),
        Buffer.from('vendor-b').toString('base64url'),
      );
      expect((await get('/api/v1/config/analyzers/vendor-b', key(renamed))).statusCode).toBe(401);
      const other = deriveCredential('another-platform-key-0123456789', {
        kind: 'plugin',
        id: 'vendor-b',
      });
      expect((await get('/api/v1/config/analyzers/vendor-b', key(other))).statusCode).toBe(401);
    });
  });

  describe("retriever X's credential", () => {
    const x = key(cred('retriever', 'imap'));

    it('submits mail as itself: the origin is its own', async () => {
      const r = await raw({ ...x, 'x-trawl-retriever': 'imap', 'x-trawl-message-id': '42:1' });
      expect(r.statusCode, r.body).toBe(200);
      expect(await originOf(r.json().job_id)).toEqual({ retriever: 'imap', message_id: '42:1' });
      // the origin header may be left out: the credential names the retriever
      const r2 = await raw({ ...x, 'x-trawl-message-id': '42:2' });
      expect(r2.statusCode, r2.body).toBe(200);
      expect(await originOf(r2.json().job_id)).toEqual({ retriever: 'imap', message_id: '42:2' });
    });

    it('cannot submit as retriever Y (403), and no job is created', async () => {
      const before = (await p.sql.query<{ n: string }>('SELECT count(*) AS n FROM jobs')).rows[0]
        ?.n;
      const r = await raw({ ...x, 'x-trawl-retriever': 'other', 'x-trawl-message-id': '9:9' });
      expect(r.statusCode).toBe(403);
      expect(code(r)).toBe('TRAWL_ERR_AUTH_NOT_RETRIEVER');
      const after = (await p.sql.query<{ n: string }>('SELECT count(*) AS n FROM jobs')).rows[0]?.n;
      expect(after).toBe(before);
    });

    it('cannot list jobs or read settings', async () => {
      expect((await get('/api/v1/analyze', x)).statusCode).toBe(403);
      expect((await get('/api/v1/config/analyzers/vendor-a', x)).statusCode).toBe(403);
    });
  });

  describe('the old shared key (INTERNAL_API_KEY) given to a plugin', () => {
    const shared = key(INTERNAL_KEY);

    it("no longer reads any plugin's settings, lists jobs or speaks as a retriever", async () => {
      const s = await get('/api/v1/config/analyzers/vendor-b', shared);
      expect(s.statusCode).toBe(403);
      expect(s.body).not.toContain('pw-vendor-b-secret');
      expect((await get('/api/v1/config/analyzers/vendor-a', shared)).statusCode).toBe(403);
      expect((await get('/api/v1/analyze', shared)).statusCode).toBe(403);
      const asRetriever = await raw({
        ...shared,
        'x-trawl-retriever': 'imap',
        'x-trawl-message-id': '7:7',
      });
      expect(asRetriever.statusCode).toBe(403);
      expect(code(asRetriever)).toBe('TRAWL_ERR_AUTH_NOT_RETRIEVER');
      const envelope = await raw({ ...shared, 'x-trawl-envelope-to': 'x@example.org' });
      // accepted as a plain submission, the envelope header ignored (only a retriever sends one)
      expect(envelope.statusCode, envelope.body).toBe(200);
      expect(await originOf(envelope.json().job_id)).toBeNull();
    });

    it("the mail orchestrator's own credential lists and reads jobs, and nothing else", async () => {
      const m = key(cred('service', 'mail-orchestrator'));
      const list = await get('/api/v1/analyze?limit=1', m);
      expect(list.statusCode).toBe(200);
      expect((await get('/api/v1/config/analyzers/vendor-a', m)).statusCode).toBe(403);
      const r = await raw({ ...m, 'x-trawl-retriever': 'imap', 'x-trawl-message-id': '1:2' });
      expect(r.statusCode).toBe(403);
      // an unknown platform service holds nothing
      expect((await get('/api/v1/analyze', key(cred('service', 'bench')))).statusCode).toBe(401);
    });
  });

  describe('secrets in plugin settings', () => {
    it('are *** for users, admins included; the rest is readable', async () => {
      const r = await get('/api/v1/config/analyzers/vendor-a', admin);
      expect(r.statusCode).toBe(200);
      expect(r.json().settings).toEqual({
        llm_api_key: '***',
        max_tokens: 512,
        vendor: { apiToken: '***', region: 'eu' },
        api_key_file: '/run/secrets/vendor-a',
      });
      expect(r.body).not.toMatch(/sk-vendor-a-secret|tok-a-secret/);
      const b = await get('/api/v1/config/analyzers/vendor-b', admin);
      expect(b.json().settings).toEqual({ password: '***', threshold: 0.7 });
    });
  });
});

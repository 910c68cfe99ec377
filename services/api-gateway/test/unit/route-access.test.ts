import Fastify, { type FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { enforceRouteAccess } from '../../src/auth/route-access.ts';
import type { Principal } from '../../src/auth/tokens.ts';
import { registerProblemHandlers } from '../../src/plugins/problems.ts';

function app(): FastifyInstance {
  const a = Fastify();
  enforceRouteAccess(a, { publicBodyBytes: 1024 });
  registerProblemHandlers(a);
  a.decorateRequest('principal', null);
  a.decorateRequest('authError', null);
  return a;
}

describe('route authorization is fail-closed', () => {
  it('refuses to start with a route that declares no access rule', async () => {
    const a = app();
    const start = async () => {
      await a.register(async (child) => {
        child.get('/open-by-mistake', async () => 'secret');
      });
      await a.ready();
    };
    await expect(start()).rejects.toMatchObject({
      code: 'TRAWL_ERR_GATEWAY_ROUTE_WITHOUT_ACCESS',
      message: expect.stringContaining('GET /open-by-mistake'),
    });
  });

  it('refuses a rule nobody meets or that names an unknown role', () => {
    for (const access of [
      {},
      { role: 'root' },
      { service: false },
      { role: 'admin', x: 1 },
      'open',
    ]) {
      const a = app();
      expect(() => a.get('/r', { config: { access: access as never } }, async () => 'x')).toThrow(
        /access rule/,
      );
    }
  });

  it('checks credentials in onRequest: an unauthenticated body is never parsed', async () => {
    const a = app();
    let parsed = 0;
    a.addContentTypeParser('application/json', { parseAs: 'string' }, (_r, body, done) => {
      parsed++;
      done(null, JSON.parse(String(body)));
    });
    a.post('/protected', { config: { access: { role: 'analyst' } } }, async () => 'ok');
    const viewer: Principal = { kind: 'user', username: 'v', roles: ['viewer'], version: 1 };
    const analyst: Principal = { kind: 'user', username: 'a', roles: ['analyst'], version: 1 };
    let who: Principal | null = null;
    a.addHook('onRequest', async (request) => {
      request.principal = who;
    });
    const post = () =>
      a.inject({ method: 'POST', url: '/protected', payload: { big: 'x'.repeat(100_000) } });
    expect((await post()).statusCode).toBe(401);
    who = viewer;
    expect((await post()).statusCode).toBe(403);
    expect(parsed).toBe(0);
    who = analyst;
    expect((await post()).statusCode).toBe(200);
    expect(parsed).toBe(1);
  });

  it('caps the body of public routes at the public limit, also HEAD routes are declared', async () => {
    const a = app();
    a.post('/public', { config: { access: 'public' } }, async () => 'ok');
    a.get('/public-get', { config: { access: 'public' } }, async () => 'ok');
    expect(
      (await a.inject({ method: 'POST', url: '/public', payload: { x: 'y'.repeat(2000) } }))
        .statusCode,
    ).toBe(413);
    expect(
      (await a.inject({ method: 'POST', url: '/public', payload: { x: 'y' } })).statusCode,
    ).toBe(200);
    expect((await a.inject({ method: 'HEAD', url: '/public-get' })).statusCode).toBe(200);
  });
});

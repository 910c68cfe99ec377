import { randomBytes, scryptSync } from 'node:crypto';
import { ConfigError } from '@trawl/config';
import { memoryPlatform } from '@trawl/platform/testing';
import type { FastifyInstance } from 'fastify';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrapAdmin } from '../../src/bootstrap.ts';
import {
  bearer,
  type Gateway,
  login,
  PASSWORD,
  type PlatformParts,
  type RealPlatform,
  SECRET,
  seedUsers,
  startGateway,
} from '../helpers/harness.ts';
import { realPlatform } from '../helpers/real-platform.ts';

const form = (fields: Record<string, string>) => ({
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  payload: new URLSearchParams(fields).toString(),
});

/** A user made by `admin` through the API; answers a fresh access token of theirs. */
async function userWithToken(
  app: FastifyInstance,
  adminToken: string,
  username: string,
  roles: string[],
): Promise<string> {
  const r = await app.inject({
    method: 'POST',
    url: '/api/v1/users',
    headers: bearer(adminToken),
    payload: { username, password: PASSWORD, roles },
  });
  expect(r.statusCode, r.body).toBe(201);
  return (await login(app, username)).access_token;
}

/**
 * Disabling, deleting or demoting a user ends their access on every replica at once. Run against
 * one platform: two gateways on one Redis (scale-out) or one gateway on the in-process cache.
 */
function revocationSuite(name: string, make: () => Promise<{ a: Gateway; b: Gateway }>) {
  describe(`revocation takes effect at once: ${name}`, () => {
    let a: Gateway;
    let b: Gateway;
    let admin: string;
    beforeAll(async () => {
      ({ a, b } = await make());
      admin = (await login(a.app, 'admin')).access_token;
    });

    const listUsers = (g: Gateway, token: string) =>
      g.app.inject({ method: 'GET', url: '/api/v1/users', headers: bearer(token) });

    it('a deleted admin cannot create another admin with the token they still hold', async () => {
      const eve = await userWithToken(a.app, admin, 'eve', ['admin']);
      expect((await listUsers(b, eve)).statusCode).toBe(200);
      const del = await b.app.inject({
        method: 'DELETE',
        url: '/api/v1/users/eve',
        headers: bearer(admin),
      });
      expect(del.statusCode).toBe(204);
      // the case: a deleted admin's token created a new admin (201)
      const r = await a.app.inject({
        method: 'POST',
        url: '/api/v1/users',
        headers: bearer(eve),
        payload: { username: 'mallory', password: PASSWORD, roles: ['admin'] },
      });
      expect(r.statusCode).toBe(401);
      expect(r.json().code).toBe('TRAWL_ERR_AUTH_TOKEN_REVOKED');
      expect((await listUsers(b, eve)).statusCode).toBe(401);
    });

    it('disabling ends the access of every token of the user; enabling again does not revive them', async () => {
      const fay = await userWithToken(a.app, admin, 'fay', ['admin']);
      expect((await listUsers(a, fay)).statusCode).toBe(200);
      const off = await a.app.inject({
        method: 'PATCH',
        url: '/api/v1/users/fay',
        headers: bearer(admin),
        payload: { disabled: true },
      });
      expect(off.statusCode).toBe(200);
      expect((await listUsers(a, fay)).statusCode).toBe(401);
      expect((await listUsers(b, fay)).statusCode).toBe(401);
      await a.app.inject({
        method: 'PATCH',
        url: '/api/v1/users/fay',
        headers: bearer(admin),
        payload: { disabled: false },
      });
      expect((await listUsers(b, fay)).statusCode).toBe(401);
      const again = (await login(b.app, 'fay')).access_token;
      expect((await listUsers(a, again)).statusCode).toBe(200);
    });

    it('demoting an admin takes their admin rights away at once; a new token carries the new role', async () => {
      const gus = await userWithToken(a.app, admin, 'gus', ['admin']);
      await b.app.inject({
        method: 'PATCH',
        url: '/api/v1/users/gus',
        headers: bearer(admin),
        payload: { roles: ['viewer'] },
      });
      expect((await listUsers(a, gus)).statusCode).toBe(401);
      const fresh = (await login(a.app, 'gus')).access_token;
      expect((await listUsers(b, fresh)).statusCode).toBe(403);
      const cfg = await b.app.inject({
        method: 'GET',
        url: '/api/v1/config',
        headers: bearer(fresh),
      });
      expect(cfg.statusCode).toBe(200);
    });
  });
}

describe('api-gateway authentication and audit (PostgreSQL, Redis, RabbitMQ)', () => {
  let p: RealPlatform;
  const open: Gateway[] = [];
  const start = async (parts: PlatformParts, o: Parameters<typeof startGateway>[1] = {}) => {
    const g = await startGateway(parts, o);
    open.push(g);
    return g;
  };

  beforeAll(async () => {
    p = await realPlatform();
  });
  afterAll(async () => {
    for (const g of open) await g.close();
    await p?.cleanup();
  });

  describe('first admin', () => {
    it('refuses a weak TRAWL_ADMIN_PASSWORD on first start without echoing it, then creates the admin from a strong one', async () => {
      const weak = 'admin123';
      const err = await bootstrapAdmin(p.store, { username: 'admin', password: weak }).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).message).toContain('TRAWL_ADMIN_PASSWORD');
      expect((err as ConfigError).message).not.toContain(weak);
      expect(await p.store.users.count()).toBe(0);
      await expect(
        bootstrapAdmin(p.store, { username: 'root', password: 'root-password-long' }),
      ).rejects.toThrow(/username/);
      expect(await bootstrapAdmin(p.store, { username: 'admin', password: PASSWORD })).toBe(true);
      await seedUsers(p.store);
    });
  });

  revocationSuite('two replicas on one Redis', async () => {
    const a = await start(p);
    const b = await start({ ...p, cache: p.secondCache() }, { cfg: a.cfg });
    return { a, b };
  });

  describe('tokens', () => {
    it('refuses a token signed with the right key but without exp', async () => {
      const g = await start(p);
      const noExp = await new SignJWT({ roles: ['admin'], typ: 'access', ver: 1 })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject('admin')
        .setIssuer('trawl')
        .setAudience('trawl-api')
        .setIssuedAt()
        .sign(new TextEncoder().encode(SECRET));
      const r = await g.app.inject({ method: 'GET', url: '/api/v1/users', headers: bearer(noExp) });
      expect(r.statusCode).toBe(401);
      expect(r.json().code).toBe('TRAWL_ERR_AUTH_INVALID_TOKEN');
    });
  });

  describe('passwords', () => {
    it('upgrades a hash made with the old scrypt parameters on the next login, transparently', async () => {
      const salt = randomBytes(16);
      const key = scryptSync('an old but long password', salt, 32, { N: 16384, r: 8, p: 1 });
      const old = `scrypt$16384$8$1$${salt.toString('base64')}$${key.toString('base64')}`;
      await p.store.users.create({ username: 'olduser', password_hash: old, roles: ['viewer'] });
      const g = await start(p);
      const first = await login(g.app, 'olduser', 'an old but long password');
      expect(first.access_token).toEqual(expect.any(String));
      const stored = (await p.store.users.get('olduser'))?.password_hash ?? '';
      expect(stored).toMatch(/^scrypt\$131072\$8\$1\$/);
      // the rehash is not a change of access: the token issued before it still works
      const me = await g.app.inject({
        method: 'GET',
        url: '/auth/me',
        headers: bearer(first.access_token),
      });
      expect(me.statusCode).toBe(200);
      await login(g.app, 'olduser', 'an old but long password');
      const bad = await g.app.inject({
        method: 'POST',
        url: '/auth/token',
        ...form({ username: 'olduser', password: 'not the password!' }),
      });
      expect(bad.statusCode).toBe(401);
    });

    it('refuses a weak password set by an admin', async () => {
      const g = await start(p);
      const admin = (await login(g.app, 'admin')).access_token;
      for (const password of ['aaaaaaaaaaaaaaaa', 'Password1234', 'hal-the-user-hal9000']) {
        const r = await g.app.inject({
          method: 'POST',
          url: '/api/v1/users',
          headers: bearer(admin),
          payload: { username: 'hal9000', password },
        });
        expect(r.statusCode, password).toBe(422);
        expect(r.json().errors[0].path).toBe('/password');
      }
    });
  });

  describe('audit log', () => {
    it('a flood of failed logins from one address is one row with a count; the admin action stays on the first page', async () => {
      // its own gateway, not in `open`: closing it writes the window's rows
      const g = await startGateway(p, {
        config: { audit: { retentionDays: 0, failureWindowSeconds: 600 } },
      });
      const admin = (await login(g.app, 'admin')).access_token;
      const before = (await p.store.audit.list({ limit: 1000 })).items.length;
      // rate limiting off (the default); most of these are refused by the login throttle
      const statuses = new Set<number>();
      for (let i = 0; i < 300; i++) {
        const r = await g.app.inject({
          method: 'POST',
          url: '/auth/token',
          remoteAddress: '203.0.113.7',
          ...form({ username: 'admin', password: `guess-${i}` }),
        });
        statuses.add(r.statusCode);
      }
      expect([...statuses].sort()).toEqual([401, 429]);
      const changed = await g.app.inject({
        method: 'PATCH',
        url: '/api/v1/users/viewer',
        headers: bearer(admin),
        payload: { roles: ['viewer'] },
      });
      expect(changed.statusCode).toBe(200);
      await g.close();
      const after = (await p.store.audit.list({ limit: 1000 })).items;
      // the user change and the flood's one row
      expect(after.length - before).toBe(2);
      const flood = after.filter((x) => x.address === '203.0.113.7');
      expect(flood).toHaveLength(1);
      expect(flood[0]).toMatchObject({ action: 'auth.login', outcome: 'failure', actor: null });
      expect(flood[0]?.details).toMatchObject({
        count: 300,
        usernames: ['admin'],
        reasons: { wrong_password: expect.any(Number), throttled: expect.any(Number) },
      });
      expect(after.slice(0, 5).map((x) => x.action)).toContain('user.update');
    });

    it('lists newest first by number past id 999, and GET /audit/verify finds an edited row', async () => {
      const g = await start(p);
      const admin = (await login(g.app, 'admin')).access_token;
      const h = bearer(admin);
      const verify = async () =>
        (await g.app.inject({ method: 'GET', url: '/api/v1/audit/verify', headers: h })).json();
      expect(await verify()).toMatchObject({ ok: true, unchained: 0 });
      await p.sql.query(`SELECT setval(pg_get_serial_sequence('audit_log', 'id'), 997)`);
      for (let i = 0; i < 4; i++) {
        await g.app.inject({
          method: 'PATCH',
          url: '/api/v1/users/viewer',
          headers: h,
          payload: { roles: ['viewer'] },
        });
      }
      const page = await g.app.inject({ method: 'GET', url: '/api/v1/audit?limit=4', headers: h });
      expect(page.json().items.map((x: { id: string }) => x.id)).toEqual([
        '1001',
        '1000',
        '999',
        '998',
      ]);
      const v = await verify();
      expect(v).toMatchObject({ ok: true, head: { id: '1001' } });
      expect(page.json().items[0].hash).toBe(v.head.hash);
      // someone with database access rewrites history
      await p.sql.query(`UPDATE audit_log SET actor = 'someone-else' WHERE id = 999`);
      expect(await verify()).toMatchObject({
        ok: false,
        broken: { id: '999', reason: expect.stringContaining('hash') },
      });
      const viewer = (await login(g.app, 'viewer')).access_token;
      expect(
        (
          await g.app.inject({
            method: 'GET',
            url: '/api/v1/audit/verify',
            headers: bearer(viewer),
          })
        ).statusCode,
      ).toBe(403);
    });
  });
});

describe('api-gateway authentication on the embedded platform (PGlite, in-process cache)', () => {
  let mp: Awaited<ReturnType<typeof memoryPlatform>>;
  let gw: Gateway;
  beforeAll(async () => {
    mp = await memoryPlatform();
    await seedUsers(mp.store);
    gw = await startGateway(mp);
  });
  afterAll(async () => {
    await gw?.close();
    await mp?.close();
  });
  // one process: both "replicas" are the same gateway
  revocationSuite('one process, in-process cache', async () => ({ a: gw, b: gw }));
});

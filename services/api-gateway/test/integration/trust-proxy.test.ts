import { loadConfig } from '@trawl/config';
import { memoryPlatform } from '@trawl/platform/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { gatewayOptionsFrom } from '../../src/options.ts';
import { type Gateway, PASSWORD, seedUsers, startGateway } from '../helpers/harness.ts';

/** The TLS proxy in front of the gateway: every request reaches the gateway from this address. */
const PROXY = '10.0.0.5';
const ATTACKER = '203.0.113.5';
const COLLEAGUE = '198.51.100.7';

describe('TRUST_PROXY and the login throttle (a gateway behind a TLS proxy)', () => {
  let gw: Gateway | undefined;
  let mp: Awaited<ReturnType<typeof memoryPlatform>> | undefined;

  afterEach(async () => {
    await gw?.close();
    await mp?.close();
    gw = undefined;
    mp = undefined;
  });

  /** The gateway as main.ts builds it from these variables; the first failed login locks (2 s). */
  async function gatewayWith(env: Record<string, string>): Promise<Gateway> {
    const cfg = loadConfig({ env: { APP_ENV: 'dev', ...env }, envFile: false });
    mp = await memoryPlatform();
    await seedUsers(mp.store);
    const { trustProxy } = gatewayOptionsFrom(cfg);
    gw = await startGateway(mp, {
      config: { ...(trustProxy === undefined ? {} : { trustProxy }), loginFailuresFree: 0 },
    });
    return gw;
  }

  /** A login through the proxy on behalf of `client` (the proxy appends it to X-Forwarded-For). */
  function loginVia(g: Gateway, client: string, password: string) {
    return g.app.inject({
      method: 'POST',
      url: '/auth/token',
      remoteAddress: PROXY,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-forwarded-for': client,
      },
      payload: new URLSearchParams({
        grant_type: 'password',
        username: 'analyst',
        password,
      }).toString(),
    });
  }

  // Regression (issue 19): trustProxy was settable only in code; behind a TLS proxy every user had
  // the proxy's address, so one client's failed logins locked everyone out of the account.
  it('keys on the client X-Forwarded-For names when TRUST_PROXY names the proxy', async () => {
    const g = await gatewayWith({ TRUST_PROXY: PROXY });
    expect((await loginVia(g, ATTACKER, 'wrong password')).statusCode).toBe(401);
    const locked = await loginVia(g, ATTACKER, PASSWORD);
    expect(locked.statusCode).toBe(429);
    expect(locked.json().code).toBe('TRAWL_ERR_AUTH_LOGIN_THROTTLED');
    // The colleague behind the same proxy is not locked out of the account.
    const colleague = await loginVia(g, COLLEAGUE, PASSWORD);
    expect(colleague.statusCode, colleague.body).toBe(200);
  });

  it('ignores X-Forwarded-For without TRUST_PROXY: a client cannot pick its address', async () => {
    const g = await gatewayWith({});
    expect((await loginVia(g, ATTACKER, 'wrong password')).statusCode).toBe(401);
    // Another X-Forwarded-For changes nothing: the client is the TCP peer (here, the proxy).
    const dodged = await loginVia(g, COLLEAGUE, PASSWORD);
    expect(dodged.statusCode).toBe(429);
    expect(dodged.json().code).toBe('TRAWL_ERR_AUTH_LOGIN_THROTTLED');
  });

  it('does not believe X-Forwarded-For from an address that is not the trusted proxy', async () => {
    const g = await gatewayWith({ TRUST_PROXY: '10.0.0.0/30' });
    const direct = (client: string, password: string) =>
      g.app.inject({
        method: 'POST',
        url: '/auth/token',
        remoteAddress: ATTACKER,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-forwarded-for': client,
        },
        payload: new URLSearchParams({
          grant_type: 'password',
          username: 'analyst',
          password,
        }).toString(),
      });
    expect((await direct('192.0.2.1', 'wrong password')).statusCode).toBe(401);
    expect((await direct('192.0.2.2', PASSWORD)).statusCode).toBe(429);
  });
});

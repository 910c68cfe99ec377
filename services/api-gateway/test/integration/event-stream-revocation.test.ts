import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { AnalysisEvent } from '@trawl/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bearer,
  type Gateway,
  login,
  PASSWORD,
  type RealPlatform,
  seedUsers,
  startGateway,
} from '../helpers/harness.ts';
import { realPlatform } from '../helpers/real-platform.ts';

/**
 * An event stream does not outlive its user's access (issue 28, item 6), on PostgreSQL, Redis and
 * RabbitMQ with two gateway replicas sharing them: a viewer's `GET /api/v1/events` opened on one
 * replica ends when an admin disables, deletes or demotes the viewer on either replica, and
 * delivers no event after the change; the viewer's next request is refused. On main before, the
 * stream kept delivering `job.completed` with verdicts until the token expired (30 min).
 */

interface Stream {
  /** The event names delivered so far. */
  names: string[];
  /** Resolves when the stream ends, with the event names it delivered. */
  ended: Promise<string[]>;
  abort(): void;
}

/** Waits until `cond` holds (the test's own timeout bounds it). */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 20));
}

async function openStream(base: string, token: string): Promise<Stream> {
  const ac = new AbortController();
  const res = await fetch(`${base}/api/v1/events`, { headers: bearer(token), signal: ac.signal });
  expect(res.status).toBe(200);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const names: string[] = [];
  const ended = (async () => {
    let buf = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return names;
        buf += value;
        for (const m of buf.matchAll(/^event: (.+)$/gm)) names.push(m[1] ?? '');
        buf = buf.slice(buf.lastIndexOf('\n') + 1);
      }
    } catch {
      return names; // aborted by the test
    }
  })();
  return { names, ended, abort: () => ac.abort() };
}

function completed(jobId: string): AnalysisEvent {
  return {
    event: 'analysis.completed',
    job_id: jobId,
    email_id: 'em_test',
    workflow: 'default',
    result: {
      is_phishing: true,
      threat_level: 'high',
      confidence: 0.9,
      summary: 'phishing',
      recommended_action: 'quarantine',
      indicators: [],
    },
    at: new Date().toISOString(),
  };
}

describe('event streams end when access ends (two replicas, real servers)', () => {
  let p: RealPlatform;
  let a: Gateway;
  let b: Gateway;
  const base: Record<'a' | 'b', string> = { a: '', b: '' };
  let admin = '';

  beforeAll(async () => {
    p = await realPlatform();
    await seedUsers(p.store);
    a = await startGateway(p);
    b = await startGateway({ ...p, cache: p.secondCache() }, { cfg: a.cfg });
    for (const [k, g] of [
      ['a', a],
      ['b', b],
    ] as const) {
      await g.app.listen({ host: '127.0.0.1', port: 0 });
      base[k] = `http://127.0.0.1:${(g.app.server.address() as AddressInfo).port}`;
    }
    admin = (await login(a.app, 'admin')).access_token;
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await p?.cleanup();
  });

  async function viewer(name: string): Promise<string> {
    const r = await a.app.inject({
      method: 'POST',
      url: '/api/v1/users',
      headers: bearer(admin),
      payload: { username: name, password: PASSWORD, roles: ['viewer'] },
    });
    expect(r.statusCode, r.body).toBe(201);
    return (await login(a.app, name)).access_token;
  }

  const change = (g: Gateway, name: string, method: 'PATCH' | 'DELETE', payload?: object) =>
    g.app.inject({
      method,
      url: `/api/v1/users/${name}`,
      headers: bearer(admin),
      ...(payload ? { payload } : {}),
    });

  it('disabled on replica A: the stream on B delivers no later event and ends; /auth/me 401', async () => {
    const token = await viewer('sse-vic');
    const kept = await openStream(base.b, admin);
    const s = await openStream(base.b, token);
    expect((await change(a, 'sse-vic', 'PATCH', { disabled: true })).statusCode).toBe(200);
    await p.broker.publish(
      p.topology.exchanges.results,
      'analysis.completed',
      completed(randomUUID()),
    );
    const names = await s.ended;
    expect(names).not.toContain('job.completed');
    // the admin's stream on the same replica still gets the event
    await p.broker.publish(
      p.topology.exchanges.results,
      'analysis.completed',
      completed(randomUUID()),
    );
    await until(() => kept.names.includes('job.completed'));
    kept.abort();
    const me = await b.app.inject({ url: '/auth/me', headers: bearer(token) });
    expect(me.statusCode).toBe(401);
  });

  it('deleted on the replica that serves the stream: it ends at once, with no event to wait for', async () => {
    const token = await viewer('sse-del');
    const s = await openStream(base.a, token);
    expect((await change(a, 'sse-del', 'DELETE')).statusCode).toBe(204);
    expect(await s.ended).toEqual([]);
  });

  it('demoted on the other replica with no event at all: the stream still ends (periodic check)', async () => {
    const r = await a.app.inject({
      method: 'POST',
      url: '/api/v1/users',
      headers: bearer(admin),
      payload: { username: 'sse-dem', password: PASSWORD, roles: ['analyst'] },
    });
    expect(r.statusCode).toBe(201);
    const token = (await login(a.app, 'sse-dem')).access_token;
    const s = await openStream(base.b, token);
    expect((await change(a, 'sse-dem', 'PATCH', { roles: ['viewer'] })).statusCode).toBe(200);
    expect(await s.ended).toEqual([]);
  }, 30_000);

  it('a stream whose user keeps access keeps delivering', async () => {
    const token = await viewer('sse-ok');
    const s = await openStream(base.b, token);
    await p.broker.publish(
      p.topology.exchanges.results,
      'analysis.completed',
      completed(randomUUID()),
    );
    await until(() => s.names.includes('job.completed'));
    s.abort();
  });
});

import type { AddressInfo } from 'node:net';
import type { AnalysisEvent } from '@trawl/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleEmail } from '../fixtures/email.ts';
import {
  bearer,
  type Gateway,
  login,
  type RealPlatform,
  seedUsers,
  startGateway,
} from '../helpers/harness.ts';
import { realPlatform } from '../helpers/real-platform.ts';

/** Reads Server-Sent Events from a fetch() body until `want` of them arrived. */
async function readEvents(
  res: Response,
  want: (events: { event: string; data: Record<string, unknown> }[]) => boolean,
): Promise<{ event: string; data: Record<string, unknown> }[]> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const out: { event: string; data: Record<string, unknown> }[] = [];
  let buf = '';
  while (!want(out)) {
    const { done, value } = await reader.read();
    if (done) break;
    buf += value;
    for (let cut = buf.indexOf('\n\n'); cut !== -1; cut = buf.indexOf('\n\n')) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      const event = /^event: (.+)$/m.exec(block)?.[1];
      const data = /^data: (.+)$/m.exec(block)?.[1];
      if (event && data) out.push({ event, data: JSON.parse(data) as Record<string, unknown> });
    }
  }
  await reader.cancel();
  return out;
}

// Scale-out mode: RabbitMQ, PostgreSQL and Redis on 127.0.0.1 (the browser test covers embedded).
describe('console support in the gateway (scale-out)', () => {
  let p: RealPlatform;
  let gw: Gateway;
  let base: string;
  let token: string;

  beforeAll(async () => {
    p = await realPlatform();
    await seedUsers(p.store);
    gw = await startGateway(p);
    await gw.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`;
    token = (await login(gw.app, 'analyst')).access_token;
  });
  afterAll(async () => {
    await gw?.close();
    await p?.cleanup();
  });

  it('streams job.created from a submission and job.completed from trawl.results', async () => {
    const ac = new AbortController();
    const res = await fetch(`${base}/api/v1/events`, {
      headers: bearer(token),
      signal: ac.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const submitted = await fetch(`${base}/api/v1/analyze`, {
      method: 'POST',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      body: JSON.stringify({ email: sampleEmail() }),
    });
    expect(submitted.status).toBe(200);
    const { job_id: jobId } = (await submitted.json()) as { job_id: string };
    // what the orchestrator publishes when the job ends
    const done: AnalysisEvent = {
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
    const events = readEvents(res, (e) => e.some((x) => x.event === 'job.completed'));
    // the stream's queue is bound before the first byte is answered: publish after the submission
    await p.broker.publish(p.topology.exchanges.results, 'analysis.completed', done);
    const got = await events;
    ac.abort();
    expect(got.map((e) => e.event)).toEqual(['job.created', 'job.completed']);
    expect(got[0]!.data).toMatchObject({ type: 'job.created', job_id: jobId });
    expect(got[1]!.data).toMatchObject({
      job_id: jobId,
      result: { is_phishing: true, threat_level: 'high' },
    });
    expect(got[1]!.data).not.toHaveProperty('result.indicators');
  });

  it('refuses the stream without a token', async () => {
    expect((await fetch(`${base}/api/v1/events`)).status).toBe(401);
  });

  it('answers the overview statistics: jobs by hour, failing analyzers, queue depth', async () => {
    const r = await gw.app.inject({ url: '/api/v1/system/stats', headers: bearer(token) });
    expect(r.statusCode).toBe(200);
    const s = r.json() as {
      jobs_by_hour: { pending: number }[];
      failing_analyzers: unknown[];
      queue: { depth: number | null };
    };
    expect(s.jobs_by_hour.reduce((n, h) => n + h.pending, 0)).toBeGreaterThanOrEqual(1);
    expect(Array.isArray(s.failing_analyzers)).toBe(true);
    expect(typeof s.queue.depth).toBe('number');
  });

  it('lists the configuration versions to admins only', async () => {
    const admin = (await login(gw.app, 'admin')).access_token;
    const r = await gw.app.inject({ url: '/api/v1/config/versions', headers: bearer(admin) });
    expect(r.statusCode).toBe(200);
    const v = r.json() as { current: string; items: { version: string }[] };
    expect(v.items[0]?.version).toBe(v.current);
    const viewer = (await login(gw.app, 'viewer')).access_token;
    expect(
      (await gw.app.inject({ url: '/api/v1/config/versions', headers: bearer(viewer) })).statusCode,
    ).toBe(403);
  });

  it('signs out through the cookie: the refresh token is used up and the cookie cleared', async () => {
    const form = new URLSearchParams({
      grant_type: 'password',
      username: 'viewer',
      password: 'correct horse battery staple',
    });
    const signin = await fetch(`${base}/auth/token`, {
      method: 'POST',
      body: form,
      headers: { 'x-trawl-refresh': 'cookie' },
    });
    const pair = (signin.headers.get('set-cookie') ?? '').split(';')[0]!;
    const out = await fetch(`${base}/auth/logout`, {
      method: 'POST',
      headers: { cookie: pair, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toContain('Max-Age=0');
    const again = await fetch(`${base}/auth/refresh`, {
      method: 'POST',
      headers: { cookie: pair, 'x-trawl-refresh': 'cookie', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(again.status).toBe(401);
  });

  it('keeps unknown API paths a 404 problem while client routes get the console', async () => {
    const miss = await gw.app.inject({ url: '/api/v1/nothing/here' });
    expect(miss.statusCode).toBe(404);
    expect(miss.headers['content-type']).toContain('application/problem+json');
    const page = await gw.app.inject({ url: '/jobs/abc' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    const asset = /src="(\/assets\/[^"]+\.js)"/.exec(page.body)?.[1];
    const js = await gw.app.inject({ url: asset! });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toContain('javascript');
    expect((await gw.app.inject({ url: '/assets/..%2Fpackage.json' })).statusCode).toBe(404);
  });
});

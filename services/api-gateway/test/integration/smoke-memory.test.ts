import { memoryPlatform } from '@trawl/platform/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleEmail } from '../fixtures/email.ts';
import { bearer, type Gateway, login, seedUsers, startGateway } from '../helpers/harness.ts';

describe('gateway on the embedded platform (PGlite, memory broker and cache)', () => {
  let gw: Gateway;
  let mp: Awaited<ReturnType<typeof memoryPlatform>>;
  let token: string;
  beforeAll(async () => {
    mp = await memoryPlatform();
    await seedUsers(mp.store);
    gw = await startGateway(mp);
    token = (await login(gw.app, 'analyst')).access_token;
  });
  afterAll(async () => {
    await gw?.close();
    await mp?.close();
  });

  it('submits an email and reads the job back', async () => {
    const r = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/analyze',
      headers: bearer(token),
      payload: { email: sampleEmail() },
    });
    expect(r.statusCode, r.body).toBe(200);
    const body = r.json();
    expect(body).toMatchObject({ status: 'queued', workflow: 'default' });
    expect(await mp.broker.queueDepth(mp.topology.queues.analysisRequests)).toBe(1);
    const g = await gw.app.inject({
      method: 'GET',
      url: `/api/v1/analyze/${body.job_id}`,
      headers: bearer(token),
    });
    expect(g.statusCode).toBe(200);
    expect(g.json()).toMatchObject({ job_id: body.job_id, status: 'queued' });
  });
});

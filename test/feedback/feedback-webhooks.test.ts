/**
 * Issue 17, the analyst loop, end to end on the real servers: the gateway (PostgreSQL, Redis,
 * RabbitMQ) and an orchestrator running the learnt classifier on the same database. Feedback is
 * stored, audited, shown, searchable and learnt (a re-analysis of the same message moves toward
 * the label; a changed feedback unlearns the old one); a webhook receiver started here gets every
 * event exactly once, signed, through receiver failures and a restart of the dispatcher.
 */

import {
  buildOrchestrator,
  createConfigSource,
  type Orchestrator,
} from '@trawl/analyzer-orchestrator';
import type { Email, Job } from '@trawl/contracts';
import { learnFeedback, learnPendingFeedback } from '@trawl/investigation';
import {
  createPgClient,
  createStore,
  createWebhookDispatcher,
  verifyWebhook,
  type WebhookDispatcher,
} from '@trawl/platform';
import {
  startWebhookReceiver,
  testUrls,
  type WebhookReceiver,
  waitFor,
} from '@trawl/platform/testing';
import { createInProcessInvoker } from '@trawl/plugin-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  analyzeClassifier,
  ClassifierSettings,
  cachedSource,
} from '../../packages/analyzers/src/classifier/index.ts';
import { silent, snapshot, wf } from '../../services/analyzer-orchestrator/test/unit/helpers.ts';
import {
  bearer,
  type Gateway,
  login,
  type RealPlatform,
  seedUsers,
  startGateway,
} from '../../services/api-gateway/test/helpers/harness.ts';
import { realPlatform } from '../../services/api-gateway/test/helpers/real-platform.ts';

const FAST = { pollIntervalMs: 10, backoffBaseMs: 10, backoffMaxMs: 80, timeoutMs: 5000 };

function message(subject: string, body: string): Email {
  return {
    headers: {
      subject,
      sender: 'someone@sender.example',
      recipients: ['alice@corp.example'],
      date: '2026-11-01T09:00:00Z',
    },
    body_text: body,
    analysis_context: {},
  };
}

const PHISH = message(
  'Urgent: your mailbox password expires today',
  'Dear user, your mailbox password expires today. Verify your account password now at the secure portal or your mailbox will be suspended. Confirm your login details immediately to avoid suspension.',
);
const HAM = message(
  'Team lunch on Friday',
  'Hi all, the team lunch is on Friday at noon in the usual place. The menu has pasta, salad and a vegetarian option. Please reply with your choice by Wednesday so we can book the table.',
);
const TARGET = message(
  'Action required: confirm your mailbox login',
  'Your mailbox login must be confirmed today. Verify your account password at the portal now or access will be suspended. Confirm immediately.',
);

/** The job's phishing probability p (confidence when phishing, else 1 − confidence). */
const pOf = (j: Job) =>
  j.result ? (j.result.is_phishing ? j.result.confidence : 1 - j.result.confidence) : Number.NaN;

describe('feedback, learning and webhooks on PostgreSQL, Redis and RabbitMQ', () => {
  let p: RealPlatform;
  let gw: Gateway;
  let orch: Orchestrator;
  let receiver: WebhookReceiver;
  let dispatcher: WebhookDispatcher;
  let webhook: { id: string; secret: string };
  const tok: Record<string, string> = {};
  const dispatchers: { d: WebhookDispatcher; close(): Promise<void> }[] = [];

  async function submit(email: Email): Promise<Job> {
    const r = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/analyze',
      headers: bearer(tok.analyst as string),
      payload: { email },
    });
    expect(r.statusCode).toBe(200);
    const id = r.json().job_id as string;
    let job: Job | undefined;
    await waitFor(async () => {
      job = await get(id);
      return job.status === 'completed';
    }, 30_000);
    return job as Job;
  }

  async function get(id: string): Promise<Job> {
    const r = await gw.app.inject({
      method: 'GET',
      url: `/api/v1/analyze/${id}`,
      headers: bearer(tok.viewer as string),
    });
    return r.json();
  }

  function feedback(id: string, body: unknown, who = 'analyst') {
    return gw.app.inject({
      method: 'POST',
      url: `/api/v1/analyze/${id}/feedback`,
      headers: bearer(tok[who] as string),
      payload: body as Record<string, unknown>,
    });
  }

  async function search(q: string): Promise<string[]> {
    const r = await gw.app.inject({
      method: 'GET',
      url: `/api/v1/analyze?${q}`,
      headers: bearer(tok.viewer as string),
    });
    expect(r.statusCode).toBe(200);
    return r.json().items.map((j: Job) => j.job_id);
  }

  beforeAll(async () => {
    p = await realPlatform();
    await seedUsers(p.store);
    gw = await startGateway(p, { deps: { learnFeedback: (id) => learnFeedback(p.sql, id) } });
    for (const u of ['viewer', 'analyst', 'admin']) tok[u] = (await login(gw.app, u)).access_token;
    // the classifier as shipped, but learning from 1 message of each class (default: 200)
    const settings = ClassifierSettings.parse({
      min_phishing_messages: 1,
      min_ham_messages: 1,
      min_tokens: 1,
    });
    const source = cachedSource(p.store.classifier, { ttlMs: 0, maxEntries: 0 });
    orch = buildOrchestrator({
      broker: p.broker,
      store: p.store,
      cache: p.cache,
      invoker: createInProcessInvoker({
        analyzers: { classifier: (e: Email) => analyzeClassifier(e, settings, source) },
      }),
      config: createConfigSource(
        snapshot('c1', [
          wf({
            id: 'default',
            name: 'Default',
            stages: [{ name: 'learnt', analyzers: [{ id: 'classifier' }] }],
          }),
        ]),
      ),
      topology: p.topology,
      logger: silent,
      options: { prefetch: 4, reaperIntervalMs: 0 },
    });
    await orch.start();
    // each event's first attempt fails (500), the second is taken
    receiver = await startWebhookReceiver((_id, nth) => (nth === 1 ? 500 : 200));
    dispatcher = createWebhookDispatcher({
      webhooks: p.store.webhooks,
      audit: p.store.audit,
      settings: FAST,
    });
  });

  afterAll(async () => {
    await dispatcher?.stop();
    for (const x of dispatchers) {
      await x.d.stop();
      await x.close();
    }
    await receiver?.close();
    await orch?.stop(1000);
    await gw?.close();
    await p?.cleanup();
  });

  it('registers a webhook: the secret is shown once, a non-http(s) URL is refused', async () => {
    const bad = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: bearer(tok.admin as string),
      payload: { url: 'file:///etc/passwd', events: ['job.completed'] },
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors).toEqual([{ path: '/url', message: expect.stringContaining('http') }]);
    const badEvent = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: bearer(tok.admin as string),
      payload: { url: receiver.url, events: ['job.exploded'] },
    });
    expect(badEvent.statusCode).toBe(422);
    expect(badEvent.json().errors[0].path).toBe('/events/0');
    const notAdmin = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: bearer(tok.analyst as string),
      payload: { url: receiver.url, events: ['job.completed'] },
    });
    expect(notAdmin.statusCode).toBe(403);

    const r = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: bearer(tok.admin as string),
      payload: {
        url: receiver.url,
        events: ['job.completed', 'job.failed', 'verdict.phishing', 'feedback.created'],
        description: 'SOAR',
      },
    });
    expect(r.statusCode).toBe(201);
    webhook = r.json();
    expect(webhook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const list = await gw.app.inject({
      method: 'GET',
      url: '/api/v1/webhooks',
      headers: bearer(tok.admin as string),
    });
    expect(list.json().items).toEqual([
      expect.objectContaining({ id: webhook.id, enabled: true, description: 'SOAR' }),
    ]);
    expect(list.body).not.toContain(webhook.secret.slice(6));
    dispatcher.start();
  });

  it('feedback: 404 unknown job, 409 unfinished, 422 bad verdict, 403 viewer', async () => {
    expect(
      (await feedback('00000000-0000-4000-8000-000000000000', { verdict: 'phishing' })).statusCode,
    ).toBe(404);
    const queued = '11111111-1111-4111-8111-111111111111';
    await p.store.jobs.create({
      job_id: queued,
      email_id: 'e-queued',
      workflow_id: 'default',
      email: HAM,
    });
    const conflict = await feedback(queued, { verdict: 'phishing' });
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json().code).toBe('TRAWL_ERR_FEEDBACK_JOB_NOT_COMPLETED');
    await p.store.jobs.remove(queued);
    const job = await submit(HAM);
    const bad = await feedback(job.job_id, { verdict: 'spam' });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors[0].path).toBe('/verdict');
    expect((await feedback(job.job_id, { verdict: 'phishing' }, 'viewer')).statusCode).toBe(403);
    expect((await get(job.job_id)).feedback).toBeNull();
    // its job.completed reaches the receiver on the second attempt
    await waitFor(() => receiver.acknowledged().size === 1);
  });

  it('learns from feedback: a re-analysis moves toward the label, a change unlearns, a repeat does nothing', async () => {
    // the sending service stops here (its events wait in the outbox until the next test)
    await dispatcher.stop();
    const phish = await submit(PHISH);
    const ham = await submit(HAM);
    const first = await submit(TARGET);
    // nothing learnt: the classifier abstains (its base probability, 0.1)
    expect(pOf(first)).toBeCloseTo(0.1, 3);
    expect((await p.store.classifier.totals()).phishing).toBe(0);

    expect((await feedback(phish.job_id, { verdict: 'phishing' })).json().learning).toBe('learned');
    expect((await feedback(ham.job_id, { verdict: 'legitimate' })).json().learning).toBe('learned');
    const given = await feedback(first.job_id, { verdict: 'phishing', note: 'credential lure' });
    expect(given.statusCode).toBe(200);
    expect(given.json()).toMatchObject({
      feedback: { verdict: 'phishing', note: 'credential lure', by: 'analyst' },
      previous: null,
      learning: 'learned',
    });
    expect(await p.store.classifier.totals()).toMatchObject({ phishing: 2, ham: 1 });

    // the same message again: more phishing than before
    const second = await submit(TARGET);
    expect(pOf(second)).toBeGreaterThan(pOf(first));
    expect(second.result?.is_phishing).toBe(true);

    // changed to legitimate: the phishing label is unlearnt, the legitimate one learnt
    const changed = await gw.app.inject({
      method: 'POST',
      url: `/api/v1/analyze/${first.job_id}/feedback`,
      headers: bearer(tok.admin as string),
      payload: { verdict: 'legitimate' },
    });
    expect(changed.json()).toMatchObject({
      feedback: { verdict: 'legitimate', note: null, by: 'admin' },
      previous: { verdict: 'phishing', note: 'credential lure', by: 'analyst' },
      learning: 'learned',
    });
    const totals = await p.store.classifier.totals();
    expect(totals).toMatchObject({ phishing: 1, ham: 2 });
    const third = await submit(TARGET);
    expect(pOf(third)).toBeLessThan(pOf(second));

    // the same feedback again: nothing learnt twice
    const repeat = await gw.app.inject({
      method: 'POST',
      url: `/api/v1/analyze/${first.job_id}/feedback`,
      headers: bearer(tok.admin as string),
      payload: { verdict: 'legitimate' },
    });
    expect(repeat.json().learning).toBe('unchanged');
    expect((await p.store.classifier.totals()).version).toBe(totals.version);

    // shown on the job
    expect((await get(first.job_id)).feedback).toEqual({
      verdict: 'legitimate',
      note: null,
      by: 'admin',
      at: expect.any(String),
    });
    expect((await get(third.job_id)).feedback).toBeNull();

    // searchable: phish's verdict (abstained: not phishing) disagrees with its feedback
    expect(await search('feedback=disagrees')).toEqual([phish.job_id]);
    expect(await search('feedback=phishing')).toEqual([phish.job_id]);
    expect((await search('feedback=legitimate')).sort()).toEqual([ham.job_id, first.job_id].sort());
    const none = await search('feedback=none&limit=200');
    expect(none).toContain(second.job_id);
    expect(none).toContain(third.job_id);
    expect(none).not.toContain(first.job_id);
    const bad = await gw.app.inject({
      method: 'GET',
      url: '/api/v1/analyze?feedback=maybe',
      headers: bearer(tok.viewer as string),
    });
    expect(bad.statusCode).toBe(400);

    // audited with old and new
    const audit = await gw.app.inject({
      method: 'GET',
      url: '/api/v1/audit?action=job.feedback&limit=10',
      headers: bearer(tok.admin as string),
    });
    // newest first: the repeat, then the change
    const mine = audit
      .json()
      .items.filter(
        (x: { target: string; actor: string }) => x.target === first.job_id && x.actor === 'admin',
      );
    expect(mine).toHaveLength(2);
    const change = mine[1];
    expect(change.details).toEqual({
      old: { verdict: 'phishing', note: 'credential lure', by: 'analyst' },
      new: { verdict: 'legitimate', note: null },
    });

    // feedback stored while learning failed is caught up later (the gateways do it every minute)
    await p.store.feedback.give({
      job_id: third.job_id,
      source: 'analyst',
      verdict: 'phishing',
      note: null,
      by: 'analyst',
      job_is_phishing: third.result?.is_phishing ?? null,
    });
    const beforeCatchUp = await p.store.classifier.totals();
    expect(await learnPendingFeedback(p.sql)).toBe(1);
    expect(await p.store.classifier.totals()).toMatchObject({
      phishing: beforeCatchUp.phishing + 1,
      ham: beforeCatchUp.ham,
    });
    expect(await learnPendingFeedback(p.sql)).toBe(0);
  });

  it('the receiver gets every event once, signed, through failures and a dispatcher restart', async () => {
    // the sending service restarts: a new dispatcher, on a new client of the same database
    const before = receiver.acknowledged().size;
    expect(before).toBeGreaterThan(0);
    const sql = createPgClient({ url: testUrls().databaseUrl, schema: p.sqlSchema, max: 2 });
    const store = createStore(sql);
    const d = createWebhookDispatcher({
      webhooks: store.webhooks,
      audit: store.audit,
      settings: FAST,
    });
    dispatchers.push({ d, close: () => sql.close() });
    d.start();
    const expected = await p.sql.query<{ event_id: string; type: string }>(
      `SELECT d.event_id, ev.type FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
       WHERE d.endpoint_id = $1`,
      [webhook.id],
    );
    const ids = expected.rows.map((r) => r.event_id);
    const types = expected.rows.map((r) => r.type);
    // 6 jobs completed after the webhook (1, then 3 and 2 re-analyses), one phishing; 5 feedbacks
    expect(types.filter((t) => t === 'job.completed')).toHaveLength(6);
    expect(types.filter((t) => t === 'verdict.phishing')).toHaveLength(1);
    expect(types.filter((t) => t === 'feedback.created')).toHaveLength(5);
    expect(before).toBeLessThan(ids.length);
    await waitFor(() => receiver.acknowledged().size === ids.length, 30_000);
    // every attempt recorded (the receiver answers before the dispatcher writes its log row)
    await waitFor(async () => {
      const r = await p.sql.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'pending'`,
        [webhook.id],
      );
      return r.rows[0]?.n === 0;
    });
    await new Promise((r) => setTimeout(r, 200));
    const acked = receiver.acknowledged();
    expect([...acked.keys()].sort()).toEqual([...ids].sort());
    const duplicates = [...acked.values()].filter((n) => n > 1).length;
    expect(duplicates).toBe(0);
    // every event failed once (500) then was taken: two requests each, all signed
    expect(receiver.received).toHaveLength(ids.length * 2);
    for (const r of receiver.received) {
      expect(
        verifyWebhook(
          webhook.secret,
          { id: r.id, timestamp: r.timestamp, signature: r.signature },
          r.body,
        ),
      ).toBe(true);
    }
    const bodies = receiver.received.filter((r) => r.status === 200).map((r) => JSON.parse(r.body));
    const fb = bodies.find(
      (b) => b.type === 'feedback.created' && b.data.previous?.verdict === 'phishing',
    );
    expect(fb.data).toMatchObject({
      feedback: { verdict: 'legitimate', by: 'admin' },
      disagrees: false,
    });
    const phishing = bodies.find((b) => b.type === 'verdict.phishing');
    expect(phishing.data).toMatchObject({ status: 'completed', result: { is_phishing: true } });
    expect(phishing.data.result.evidence).toBeUndefined();

    // the delivery log through the API
    const log = await gw.app.inject({
      method: 'GET',
      url: `/api/v1/webhooks/${webhook.id}/deliveries?limit=200`,
      headers: bearer(tok.admin as string),
    });
    expect(log.statusCode).toBe(200);
    const items = log.json().items as { status_code: number; delivery_status: string }[];
    expect(items).toHaveLength(ids.length * 2);
    expect(items.filter((x) => x.status_code === 500)).toHaveLength(ids.length);
    expect(items.every((x) => x.delivery_status === 'delivered')).toBe(true);
  });

  it('admins update, disable and delete a webhook; each change is audited', async () => {
    const off = await gw.app.inject({
      method: 'PATCH',
      url: `/api/v1/webhooks/${webhook.id}`,
      headers: bearer(tok.admin as string),
      payload: { enabled: false },
    });
    expect(off.json()).toMatchObject({ enabled: false });
    const job = await submit(HAM);
    const rows = await p.sql.query(
      `SELECT 1 FROM webhook_events WHERE payload -> 'data' ->> 'job_id' = $1`,
      [job.job_id],
    );
    expect(rows.rows).toHaveLength(0);
    const del = await gw.app.inject({
      method: 'DELETE',
      url: `/api/v1/webhooks/${webhook.id}`,
      headers: bearer(tok.admin as string),
    });
    expect(del.statusCode).toBe(204);
    const gone = await gw.app.inject({
      method: 'GET',
      url: `/api/v1/webhooks/${webhook.id}/deliveries`,
      headers: bearer(tok.admin as string),
    });
    expect(gone.statusCode).toBe(404);
    const audit = await gw.app.inject({
      method: 'GET',
      url: '/api/v1/audit?limit=50',
      headers: bearer(tok.admin as string),
    });
    const actions = audit
      .json()
      .items.filter((x: { target: string }) => x.target === webhook.id)
      .map((x: { action: string }) => x.action);
    expect(actions).toEqual(['webhook.delete', 'webhook.update', 'webhook.create']);
    expect(audit.body).not.toContain(webhook.secret.slice(6));
  });
});

import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createStore } from '../store/create-store.ts';
import type { Store } from '../store/repositories.ts';
import type { SqlClient } from '../store/types.ts';
import { emitEventsSql } from '../store/webhook-repository.ts';
import {
  createWebhookDispatcher,
  emitWebhookEvent,
  type WebhookDispatcher,
  type WebhookSettings,
  webhookEventId,
  webhookPayload,
} from '../webhooks/dispatcher.ts';
import { generateWebhookSecret, verifyWebhook } from '../webhooks/signature.ts';
import { waitFor } from './broker-conformance.ts';
import { migratedSuite } from './migrated-suite.ts';

/** One request a test receiver got. */
export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  /** What the receiver answered. */
  status: number;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Ids answered 2xx, with how many times each. */
  acknowledged(): Map<string, number>;
  close(): Promise<void>;
}

/**
 * A webhook receiver on 127.0.0.1: `answer(id, nth)` decides the status of the nth (1-based)
 * request for an event id.
 */
export async function startWebhookReceiver(
  answer: (id: string, nth: number) => number = () => 200,
): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const seen = new Map<string, number>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const id = String(req.headers['webhook-id'] ?? '');
      const nth = (seen.get(id) ?? 0) + 1;
      seen.set(id, nth);
      const status = answer(id, nth);
      received.push({
        id,
        timestamp: String(req.headers['webhook-timestamp'] ?? ''),
        signature: String(req.headers['webhook-signature'] ?? ''),
        body: Buffer.concat(chunks).toString('utf8'),
        status,
      });
      res.statusCode = status;
      res.end(status < 300 ? 'ok' : 'receiver failing');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    acknowledged() {
      const out = new Map<string, number>();
      for (const r of received) if (r.status < 300) out.set(r.id, (out.get(r.id) ?? 0) + 1);
      return out;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const FAST: Partial<WebhookSettings> = {
  pollIntervalMs: 10,
  batchSize: 4,
  timeoutMs: 5000,
  backoffBaseMs: 10,
  backoffMaxMs: 80,
};

const EMAIL = {
  headers: {
    subject: 'Invoice',
    sender: 'a@example.com',
    recipients: ['b@example.org'],
    date: '2026-01-01T00:00:00Z',
  },
  body_text: 'hello',
  analysis_context: {},
};

/**
 * Webhook events and deliveries (issue 17): PostgreSQL and PGlite must both pass it. `makeSql`
 * answers a client on an empty database/schema (migrated here), `reopen` another client on the
 * same database (a restarted process; PGlite: the same client), and a cleanup.
 */
export function webhookConformance(
  name: string,
  makeSql: () => Promise<{
    sql: SqlClient;
    reopen(): Promise<{ sql: SqlClient; close(): Promise<void> }>;
    cleanup(): Promise<void>;
  }>,
): void {
  describe(`webhook delivery conformance: ${name}`, () => {
    let target: Awaited<ReturnType<typeof makeSql>>;
    let store: Store;
    migratedSuite(makeSql, (t, s) => {
      target = t;
      store = s;
    });

    /**
     * Runs a dispatcher with `settings` while `during` runs, then stops it and closes the receiver
     * (also when `during` fails).
     */
    async function dispatching(
      receiver: { close(): Promise<void> },
      settings: Partial<WebhookSettings>,
      during: () => Promise<void>,
    ): Promise<void> {
      const d = createWebhookDispatcher({ webhooks: store.webhooks, audit: store.audit, settings });
      d.start();
      try {
        await during();
      } finally {
        await d.stop();
        await receiver.close();
      }
    }

    async function endpoint(url: string, events: string[], enabled = true) {
      const secret = generateWebhookSecret();
      const e = await store.webhooks.create({
        id: randomUUID(),
        url,
        events,
        secret,
        description: null,
        enabled,
        created_by: 'admin',
      });
      return { ...e, secret };
    }

    async function eventsOf(endpointId: string): Promise<{ type: string; payload: unknown }[]> {
      const r = await target.sql.query<{ type: string; payload: unknown }>(
        `SELECT ev.type, ev.payload FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
         WHERE d.endpoint_id = $1 ORDER BY ev.created_at, ev.type`,
        [endpointId],
      );
      return r.rows.map((x) => ({
        type: x.type,
        payload: typeof x.payload === 'string' ? JSON.parse(x.payload) : x.payload,
      }));
    }

    it('stores an event only for the enabled endpoints subscribed to it', async () => {
      const on = await endpoint('http://127.0.0.1:9/on', ['feedback.created']);
      const off = await endpoint('http://127.0.0.1:9/off', ['feedback.created'], false);
      const r = await emitWebhookEvent(store, 'feedback.created', { job_id: 'x' });
      expect(r.id).toMatch(/^msg_[0-9a-f]{32}$/);
      expect(r.deliveries).toBe(1);
      expect(await emitWebhookEvent(store, 'campaign.updated', {})).toMatchObject({
        deliveries: 0,
      });
      expect(await eventsOf(on.id)).toEqual([
        {
          type: 'feedback.created',
          payload: {
            type: 'feedback.created',
            timestamp: expect.any(String),
            data: { job_id: 'x' },
          },
        },
      ]);
      expect(await eventsOf(off.id)).toEqual([]);
      const none = await target.sql.query(
        `SELECT 1 FROM webhook_events WHERE type = 'campaign.updated'`,
      );
      expect(none.rows).toHaveLength(0);
      await store.webhooks.remove(on.id);
      await store.webhooks.remove(off.id);
    });

    it('several events written by one statement: each for the endpoints subscribed to its type', async () => {
      const camp = await endpoint('http://127.0.0.1:9/camp', ['campaign.updated']);
      const fb = await endpoint('http://127.0.0.1:9/fb', ['feedback.created', 'campaign.updated']);
      const ev = (type: string, n: number) => ({
        id: webhookEventId(),
        type,
        payload: webhookPayload(type, { n }),
      });
      expect(await emitEventsSql(target.sql, [])).toBe(0);
      const deliveries = await emitEventsSql(target.sql, [
        ev('campaign.updated', 1),
        ev('job.failed', 2),
        ev('campaign.updated', 3),
        ev('feedback.created', 4),
      ]);
      expect(deliveries).toBe(5);
      const data = async (id: string) =>
        (await eventsOf(id)).map((e) => (e.payload as { data: { n: number } }).data.n).sort();
      expect(await data(camp.id)).toEqual([1, 3]);
      expect(await data(fb.id)).toEqual([1, 3, 4]);
      const unsubscribed = await target.sql.query(
        `SELECT 1 FROM webhook_events WHERE type = 'job.failed' AND payload->'data'->>'n' = '2'`,
      );
      expect(unsubscribed.rows).toHaveLength(0);
      await store.webhooks.remove(camp.id);
      await store.webhooks.remove(fb.id);
    });

    it('a finished job writes job.completed, verdict.phishing and job.failed with its result', async () => {
      const e = await endpoint('http://127.0.0.1:9/jobs', [
        'job.completed',
        'job.failed',
        'verdict.phishing',
      ]);
      const ids = [randomUUID(), randomUUID(), randomUUID()];
      for (const id of ids) {
        await store.jobs.create({
          job_id: id,
          email_id: `e-${id}`,
          workflow_id: 'default',
          email: EMAIL,
        });
      }
      const result = (is_phishing: boolean) => ({
        is_phishing,
        confidence: 0.9,
        threat_level: is_phishing ? ('high' as const) : ('none' as const),
        summary: 's',
        recommended_action: is_phishing ? ('quarantine' as const) : ('allow' as const),
        indicators: [],
      });
      const trace = { workflow_id: 'default', duration_ms: 1, stages: [] };
      await Promise.all([
        store.jobs.finish({
          job_id: ids[0] as string,
          outcome: { status: 'completed', result: result(true), trace },
        }),
        store.jobs.finish({
          job_id: ids[1] as string,
          outcome: { status: 'completed', result: result(false), trace },
        }),
        store.jobs.finish({
          job_id: ids[2] as string,
          outcome: { status: 'failed', error: { code: 'TRAWL_ERR_DEADLINE', message: 'late' } },
        }),
      ]);
      const got = await eventsOf(e.id);
      const byJob = (id: string) =>
        got
          .filter((x) => (x.payload as { data: { job_id: string } }).data.job_id === id)
          .map((x) => x.type)
          .sort();
      expect(byJob(ids[0] as string)).toEqual(['job.completed', 'verdict.phishing']);
      expect(byJob(ids[1] as string)).toEqual(['job.completed']);
      expect(byJob(ids[2] as string)).toEqual(['job.failed']);
      const completed = got.find(
        (x) =>
          x.type === 'job.completed' &&
          (x.payload as { data: { job_id: string } }).data.job_id === ids[0],
      );
      expect(completed?.payload).toMatchObject({
        type: 'job.completed',
        data: {
          job_id: ids[0],
          email_id: `e-${ids[0]}`,
          workflow: 'default',
          status: 'completed',
          result: { is_phishing: true, threat_level: 'high' },
        },
      });
      const failed = got.find((x) => x.type === 'job.failed');
      expect(failed?.payload).toMatchObject({
        data: { status: 'failed', error: { code: 'TRAWL_ERR_DEADLINE' } },
      });
      // a finish that changes nothing (already finished) writes no event
      await store.jobs.finish({
        job_id: ids[0] as string,
        outcome: { status: 'completed', result: result(true), trace },
      });
      expect(await eventsOf(e.id)).toHaveLength(got.length);
      await store.webhooks.remove(e.id);
    });

    it('delivers each event once, signed, through receiver failures and dispatcher restarts', async () => {
      // every event fails twice (500) before the receiver takes it
      const receiver = await startWebhookReceiver((_id, nth) => (nth <= 2 ? 500 : 204));
      const e = await endpoint(receiver.url, ['feedback.created', 'campaign.updated']);
      const ids: string[] = [];
      for (let i = 0; i < 8; i++) {
        const type = i % 2 ? 'feedback.created' : 'campaign.updated';
        ids.push((await emitWebhookEvent(target.sql, type, { n: i })).id);
      }
      const first = createWebhookDispatcher({
        webhooks: store.webhooks,
        audit: store.audit,
        settings: FAST,
      });
      first.start();
      await waitFor(() => receiver.acknowledged().size >= 2);
      await first.stop();
      // the sending service restarts: two new dispatchers on new clients share the outbox
      const a = await target.reopen();
      const b = await target.reopen();
      const more: WebhookDispatcher[] = [a, b].map((c) => {
        const s = createStore(c.sql);
        return createWebhookDispatcher({ webhooks: s.webhooks, audit: s.audit, settings: FAST });
      });
      for (const d of more) d.start();
      try {
        await waitFor(() => receiver.acknowledged().size === ids.length);
        // every attempt recorded (the receiver answers before the dispatcher writes its log row)
        await waitFor(async () => {
          const r = await target.sql.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'pending'`,
            [e.id],
          );
          return r.rows[0]?.n === 0;
        });
        // let anything still due run: a duplicate would show up now
        await new Promise((r) => setTimeout(r, 200));
      } finally {
        for (const d of more) await d.stop();
        await a.close();
        await b.close();
        await receiver.close();
      }
      const acked = receiver.acknowledged();
      for (const id of ids) expect(acked.get(id), `event ${id}`).toBe(1);
      expect([...acked.keys()].sort()).toEqual([...ids].sort());
      const duplicates = [...acked.values()].filter((n) => n > 1).length;
      expect(duplicates).toBe(0);
      expect(receiver.received.length).toBe(ids.length * 3);
      for (const r of receiver.received) {
        expect(
          verifyWebhook(
            e.secret,
            { id: r.id, timestamp: r.timestamp, signature: r.signature },
            r.body,
          ),
        ).toBe(true);
        expect(
          verifyWebhook(
            generateWebhookSecret(),
            { id: r.id, timestamp: r.timestamp, signature: r.signature },
            r.body,
          ),
        ).toBe(false);
        expect(JSON.parse(r.body)).toMatchObject({
          type: expect.any(String),
          data: expect.any(Object),
        });
      }
      // the delivery log: three attempts per event, newest first, the last one delivered
      const log = await store.webhooks.attempts(e.id, { limit: 200 });
      expect(log.items).toHaveLength(ids.length * 3);
      const one = log.items.filter((x) => x.event_id === ids[0]);
      expect(one.map((x) => [x.attempt, x.status_code])).toEqual([
        [3, 204],
        [2, 500],
        [1, 500],
      ]);
      expect(one[0]).toMatchObject({ delivery_status: 'delivered', error: null });
      expect(one[1]?.error).toContain('HTTP 500');
      const page = await store.webhooks.attempts(e.id, { limit: 5 });
      expect(page.items).toHaveLength(5);
      expect(page.next_cursor).not.toBeNull();
      const next = await store.webhooks.attempts(e.id, {
        limit: 5,
        cursor: page.next_cursor as string,
      });
      expect(Number(next.items[0]?.id)).toBeLessThan(Number(page.items[4]?.id));
      expect((await store.webhooks.get(e.id))?.failing_since).toBeNull();
      await store.webhooks.remove(e.id);
    });

    it('a delivery claimed by a dispatcher that died is sent by another after the lease', async () => {
      const receiver = await startWebhookReceiver();
      const e = await endpoint(receiver.url, ['job.completed']);
      const { id } = await emitWebhookEvent(store, 'job.completed', { job_id: 'crash' });
      // claimed, never answered: the process died mid-send
      const lost = await store.webhooks.claim(10, 150);
      expect(lost.map((d) => d.event_id)).toEqual([id]);
      expect(await store.webhooks.claim(10, 150)).toEqual([]);
      await dispatching(receiver, FAST, () => waitFor(() => receiver.acknowledged().get(id) === 1));
      const log = await store.webhooks.attempts(e.id, { limit: 10 });
      expect(log.items.map((x) => x.attempt)).toEqual([2]);
      await store.webhooks.remove(e.id);
    });

    it('gives up after maxAgeMs and disables an endpoint failing for disableAfterMs, audited', async () => {
      const receiver = await startWebhookReceiver(() => 503);
      const e = await endpoint(receiver.url, ['job.failed']);
      const { id } = await emitWebhookEvent(store, 'job.failed', { job_id: 'never' });
      await dispatching(receiver, { ...FAST, maxAgeMs: 400, disableAfterMs: 300 }, () =>
        waitFor(async () => (await store.webhooks.get(e.id))?.enabled === false),
      );
      const w = await store.webhooks.get(e.id);
      expect(w?.disabled_reason).toMatch(/^failing since /);
      const audit = await store.audit.list({ limit: 10, action: 'webhook.disable' });
      expect(audit.items.some((x) => x.target === e.id)).toBe(true);
      expect(receiver.acknowledged().get(id)).toBeUndefined();
      // a disabled endpoint gets no new events and its pending deliveries are not claimed
      expect((await emitWebhookEvent(store, 'job.failed', {})).deliveries).toBe(0);
      expect(await store.webhooks.claim(10, 1000)).toEqual([]);
      // re-enabled: a fresh start
      const again = await store.webhooks.update(e.id, { enabled: true });
      expect(again).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
      await store.webhooks.remove(e.id);
    });

    it('purges old events that no delivery waits for, with their log', async () => {
      await target.sql.query('DELETE FROM webhook_events'); // the earlier tests' events
      const e = await endpoint('http://127.0.0.1:9/purge', ['job.completed']);
      const done = await emitWebhookEvent(store, 'job.completed', { job_id: 'done' });
      const [claimed] = await store.webhooks.claim(1, 60_000);
      expect(claimed?.event_id).toBe(done.id);
      await store.webhooks.delivered(claimed as NonNullable<typeof claimed>, 200, 1);
      const waiting = await emitWebhookEvent(store, 'job.completed', { job_id: 'waiting' });
      expect(await store.webhooks.purge(new Date(Date.now() - 60_000), 100)).toBe(0);
      expect(await store.webhooks.purge(new Date(Date.now() + 60_000), 100)).toBe(1);
      const left = await target.sql.query<{ id: string }>('SELECT id FROM webhook_events');
      expect(left.rows.map((r) => r.id)).toEqual([waiting.id]);
      expect((await store.webhooks.attempts(e.id, { limit: 10 })).items).toEqual([]);
      await store.webhooks.remove(e.id);
      expect((await target.sql.query('SELECT 1 FROM webhook_deliveries')).rows).toEqual([]);
      await target.sql.query('DELETE FROM webhook_events');
    });

    it('gives a delivery up once it is older than maxAgeMs; an endpoint that still answers others stays', async () => {
      // the receiver refuses one event and takes the others
      let bad = '';
      const receiver = await startWebhookReceiver((id) => (id === bad ? 500 : 200));
      const e = await endpoint(receiver.url, ['job.failed']);
      const statusOf = async (id: string) => {
        const r = await target.sql.query<{ status: string }>(
          'SELECT status FROM webhook_deliveries WHERE event_id = $1',
          [id],
        );
        return r.rows[0]?.status;
      };
      await dispatching(
        receiver,
        { ...FAST, maxAgeMs: 1000, disableAfterMs: 3_600_000 },
        async () => {
          bad = (await emitWebhookEvent(store, 'job.failed', { job_id: 'old' })).id;
          await waitFor(() => receiver.received.some((r) => r.id === bad));
          const good = await emitWebhookEvent(store, 'job.failed', { job_id: 'fine' });
          await waitFor(async () => (await statusOf(good.id)) === 'delivered');
          await waitFor(async () => (await statusOf(bad)) === 'failed');
        },
      );
      const log = await store.webhooks.attempts(e.id, { limit: 200 });
      const mine = log.items.filter((x) => x.event_id === bad);
      expect(mine.length).toBeGreaterThan(1);
      expect(mine[0]?.delivery_status).toBe('failed');
      expect((await store.webhooks.get(e.id))?.enabled).toBe(true);
      await store.webhooks.remove(e.id);
    });

    it('disables an endpoint whose delivery is given up without one success since its first attempt', async () => {
      const receiver = await startWebhookReceiver(() => 500);
      const e = await endpoint(receiver.url, ['job.failed']);
      await emitWebhookEvent(store, 'job.failed', { job_id: 'alone' });
      await dispatching(receiver, { ...FAST, maxAgeMs: 500, disableAfterMs: 3_600_000 }, () =>
        waitFor(async () => (await store.webhooks.get(e.id))?.enabled === false),
      );
      const log = await store.webhooks.attempts(e.id, { limit: 200 });
      expect(log.items[0]?.delivery_status).toBe('failed');
      await store.webhooks.remove(e.id);
    });
  });
}

import { randomUUID } from 'node:crypto';
import type { WebhookSettings } from '@trawl/config';
import { backoffDelay, describeAnswer, fetchBounded } from '@trawl/contracts';
import { errorInfo, type PlatformLogger, silentLogger } from '../logger.ts';
import type { AuditRepository, Store } from '../store/repositories.ts';
import type { SqlClient } from '../store/types.ts';
import {
  type ClaimedDelivery,
  emitEventSql,
  type WebhookRepository,
} from '../store/webhook-repository.ts';
import { signWebhook } from './signature.ts';

/**
 * Webhook delivery (issue 17, docs/feedback-and-webhooks.md). Events are rows (webhook_events and
 * one webhook_deliveries row per subscribed endpoint) written in the same transaction as what
 * they announce; a dispatcher loop, run by every gateway and by embedded mode, claims due
 * deliveries with FOR UPDATE SKIP LOCKED, sends them signed per Standard Webhooks, records every
 * attempt, and retries failures with exponential backoff and full jitter for up to `maxAgeMs`.
 */
export type { WebhookSettings };

/** The default webhook settings: polling, batch size, timeouts, back-off. */
export const DEFAULT_WEBHOOK_SETTINGS: WebhookSettings = {
  pollIntervalMs: 1000,
  batchSize: 16,
  timeoutMs: 10_000,
  backoffBaseMs: 5000,
  backoffMaxMs: 3_600_000,
  maxAgeMs: 86_400_000,
  disableAfterMs: 86_400_000,
  logRetentionMs: 30 * 86_400_000,
};

const PURGE_EVERY_MS = 3_600_000;

/** Full jitter: a random delay in [0, min(max, base·2^(attempt−1))]. */
export function backoffDelayMs(
  attempt: number,
  s: Pick<WebhookSettings, 'backoffBaseMs' | 'backoffMaxMs'>,
  random: () => number = Math.random,
): number {
  const policy = { initialMs: s.backoffBaseMs, maxMs: s.backoffMaxMs, jitter: 1 };
  return backoffDelay(Math.max(1, attempt), policy, random);
}

/** The body of an event: `{type, timestamp, data}` (Standard Webhooks). */
export function webhookPayload(type: string, data: unknown, at: Date = new Date()) {
  return { type, timestamp: at.toISOString(), data };
}

/** A new event id (`msg_` + 32 hex digits); the `webhook-id` of every attempt of the event. */
export function webhookEventId(): string {
  return `msg_${randomUUID().replaceAll('-', '')}`;
}

/**
 * Emits an event: stores it for every enabled endpoint subscribed to `type`, in one statement on
 * `sql` (pass a transaction's client to make it part of the change it announces). Nothing is
 * stored when no endpoint wants it. Answers the event id and how many deliveries were queued.
 */
export async function emitWebhookEvent(
  sql: SqlClient | Pick<Store, 'sql'>,
  type: string,
  data: unknown,
): Promise<{ id: string; deliveries: number }> {
  const client = 'query' in sql ? sql : sql.sql;
  const id = webhookEventId();
  const deliveries = await emitEventSql(client, { id, type, payload: webhookPayload(type, data) });
  return { id, deliveries };
}

/** Delivers events to the webhooks subscribed to them, signed, with retries. */
export interface WebhookDispatcher {
  start(): void;
  /** Stops claiming and waits for the attempts in flight. */
  stop(): Promise<void>;
  /** One claim-and-send round; answers how many deliveries it attempted (tests, tools). */
  runOnce(): Promise<number>;
}

/** What the webhook dispatcher needs: its repositories, settings, logger, fetch and clock. */
export interface WebhookDispatcherDeps {
  webhooks: WebhookRepository;
  audit: Pick<AuditRepository, 'append'>;
  settings?: Partial<WebhookSettings>;
  logger?: PlatformLogger;
  fetch?: typeof fetch;
  random?: () => number;
  now?: () => Date;
  userAgent?: string;
}

/**
 * Bytes of a failed attempt's answer read (the rest is never read: its socket is closed), and
 * characters of it the delivery log may quote (plain text or JSON only; see describeAnswer).
 */
const ERROR_BODY_BYTES = 512;
const ERROR_TEXT_CHARS = 200;

/** Builds the webhook dispatcher. */
export function createWebhookDispatcher(deps: WebhookDispatcherDeps): WebhookDispatcher {
  const s: WebhookSettings = { ...DEFAULT_WEBHOOK_SETTINGS, ...deps.settings };
  const log = deps.logger ?? silentLogger;
  const doFetch = deps.fetch ?? fetch;
  const now = deps.now ?? (() => new Date());
  const random = deps.random ?? Math.random;
  // a claim lasts past the attempt's timeout: a dispatcher that died is replaced after it
  const leaseMs = s.timeoutMs + 30_000;
  let running = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;

  async function attempt(d: ClaimedDelivery): Promise<void> {
    const ts = Math.floor(now().getTime() / 1000);
    const started = performance.now();
    let statusCode: number | null = null;
    let error = '';
    try {
      const res = await fetchBounded(
        d.url,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'user-agent': deps.userAgent ?? 'Trawl-Webhooks/1',
            'webhook-id': d.event_id,
            'webhook-timestamp': String(ts),
            'webhook-signature': signWebhook(d.secret, d.event_id, ts, d.body),
          },
          body: d.body,
          // a redirect is not followed (the admin set this URL, not the receiver): it is a failure
          redirect: 'manual',
        },
        {
          // a success needs no body: none is read; a failure is read for a short text only
          maxBytes: 0,
          okOver: 'truncate',
          errorBytes: ERROR_BODY_BYTES,
          timeoutMs: s.timeoutMs,
          fetch: doFetch,
        },
      );
      statusCode = res.status;
      if (res.status >= 200 && res.status < 300) {
        await deps.webhooks.delivered(d, res.status, performance.now() - started);
        return;
      }
      // status, content type and length; a quote only of a plain-text or JSON body: a receiver's
      // HTML page (an internal service's, a proxy's) is never shown in the delivery log
      error = describeAnswer(res, ERROR_TEXT_CHARS);
    } catch (err) {
      error = errorInfo(err).message;
    }
    const durationMs = performance.now() - started;
    const age = now().getTime() - d.created_at.getTime();
    const delay = backoffDelayMs(d.attempt, s, random);
    const retryAt = age + delay < s.maxAgeMs ? new Date(now().getTime() + delay) : null;
    const r = await deps.webhooks.failed(d, {
      statusCode,
      error,
      durationMs,
      retryAt,
      disableAfterMs: s.disableAfterMs,
    });
    log.warn(
      {
        webhook_id: d.endpoint_id,
        event_id: d.event_id,
        attempt: d.attempt,
        status_code: statusCode,
        retry_at: retryAt?.toISOString() ?? null,
      },
      retryAt ? 'webhook delivery failed; will retry' : 'webhook delivery given up',
    );
    if (r.disabled) {
      log.warn({ webhook_id: d.endpoint_id }, 'webhook endpoint disabled after failing too long');
      await deps.audit
        .append({
          actor: null,
          action: 'webhook.disable',
          target: d.endpoint_id,
          outcome: 'success',
          address: null,
          request_id: null,
          details: { reason: 'failing', disable_after_ms: s.disableAfterMs, last_error: error },
        })
        .catch((err) => log.error({ err: errorInfo(err) }, 'audit append failed'));
    }
  }

  async function runOnce(): Promise<number> {
    const claimed = await deps.webhooks.claim(s.batchSize, leaseMs);
    await Promise.all(
      claimed.map((d) =>
        attempt(d).catch((err) =>
          log.error({ err: errorInfo(err), event_id: d.event_id }, 'webhook attempt not recorded'),
        ),
      ),
    );
    return claimed.length;
  }

  let purgedAt = 0;
  async function purge(): Promise<void> {
    if (now().getTime() - purgedAt < PURGE_EVERY_MS) return;
    purgedAt = now().getTime();
    try {
      const before = new Date(now().getTime() - s.logRetentionMs);
      let n = 0;
      for (let k = 0; k < 100; k++) {
        const got = await deps.webhooks.purge(before, 1000);
        n += got;
        if (got < 1000) break;
      }
      if (n > 0) log.info({ purged: n }, 'old webhook events purged');
    } catch (err) {
      log.warn({ err: errorInfo(err) }, 'webhook purge failed');
    }
  }

  async function run(): Promise<void> {
    while (running) {
      await purge();
      let n = 0;
      try {
        n = await runOnce();
      } catch (err) {
        log.warn({ err: errorInfo(err) }, 'webhook claim failed; retrying');
      }
      if (!running) break;
      if (n >= s.batchSize) continue;
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, s.pollIntervalMs);
      });
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      loop = run();
    },
    async stop() {
      running = false;
      if (timer) clearTimeout(timer);
      wake?.();
      await loop;
    },
    runOnce,
  };
}

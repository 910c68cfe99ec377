import type { Webhook } from '@trawl/contracts';
import { badCursor } from '../errors.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { iso, isoOrNull, jsonParam } from './rows.ts';
import type { SqlClient } from './types.ts';

/**
 * Webhook endpoints, their events and the durable outbox of deliveries (issue 17, migration 007).
 * Written once for PostgreSQL and PGlite. The dispatcher (webhooks/dispatcher.ts) claims due
 * deliveries with FOR UPDATE SKIP LOCKED, so any number of gateways can run one.
 */
export type WebhookEndpoint = Omit<Webhook, 'events'> & { events: string[] };

export interface WebhookAttempt {
  id: string;
  delivery_id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  /** The delivery's state now: pending (will be retried), delivered, failed (given up). */
  delivery_status: 'pending' | 'delivered' | 'failed';
}

/** A delivery claimed for one attempt. */
export interface ClaimedDelivery {
  id: string;
  event_id: string;
  endpoint_id: string;
  /** This attempt's number (1 for the first). */
  attempt: number;
  created_at: Date;
  url: string;
  secret: string;
  /** The body to send, exactly. */
  body: string;
}

export interface WebhookRepository {
  create(e: {
    id: string;
    url: string;
    events: string[];
    secret: string;
    description: string | null;
    enabled: boolean;
    created_by: string | null;
  }): Promise<WebhookEndpoint>;
  get(id: string): Promise<WebhookEndpoint | null>;
  list(): Promise<WebhookEndpoint[]>;
  update(
    id: string,
    patch: { url?: string; events?: string[]; description?: string | null; enabled?: boolean },
  ): Promise<WebhookEndpoint | null>;
  remove(id: string): Promise<boolean>;
  /** The delivery log of an endpoint: its attempts, newest first; the cursor is opaque. */
  attempts(
    endpointId: string,
    q: { limit: number; cursor?: string },
  ): Promise<{ items: WebhookAttempt[]; next_cursor: string | null }>;
  /**
   * Claims up to `limit` due deliveries of enabled endpoints (FOR UPDATE SKIP LOCKED) and moves
   * their next attempt `leaseMs` on (a dispatcher that dies mid-send leaves them to another).
   */
  claim(limit: number, leaseMs: number): Promise<ClaimedDelivery[]>;
  /** Records a successful attempt: the delivery is done, the endpoint no longer failing. */
  delivered(d: ClaimedDelivery, statusCode: number, durationMs: number): Promise<void>;
  /**
   * Records a failed attempt: the delivery is retried at `retryAt`, or given up (`failed`) when
   * `retryAt` is null; the endpoint is failing since its first failure after a success, and is
   * disabled when that is `disableAfterMs` ago, or when this delivery is given up and the endpoint
   * has not answered any attempt well since this delivery's first (it failed for the delivery's
   * whole life). Answers whether this disabled it.
   */
  failed(
    d: ClaimedDelivery,
    o: {
      statusCode: number | null;
      error: string;
      durationMs: number;
      retryAt: Date | null;
      disableAfterMs: number;
    },
  ): Promise<{ disabled: boolean }>;
  /**
   * Deletes events older than `before` that no delivery still waits for, with their deliveries and
   * attempts (the delivery log's retention), at most `limit` at a time; answers how many.
   */
  purge(before: Date, limit: number): Promise<number>;
}

/** An endpoint as read: the time columns as the driver gives them (Date or string). */
type EndpointRow = Omit<WebhookEndpoint, 'failing_since' | 'created_at' | 'updated_at'> & {
  failing_since: unknown;
  created_at: unknown;
  updated_at: unknown;
};

const ENDPOINT_COLUMNS =
  'id, url, events, description, enabled, disabled_reason, failing_since, created_by, created_at, updated_at';

/** Every query reads ENDPOINT_COLUMNS: the row's keys, in the order of the API's shape. */
function toEndpoint(r: EndpointRow): WebhookEndpoint {
  return {
    ...r,
    failing_since: isoOrNull(r.failing_since),
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

/**
 * The SQL that stores an event for every enabled endpoint subscribed to its type: one statement,
 * nothing written when none is. `$1` id, `$2` type, `$3` payload (jsonb text).
 */
export const EMIT_EVENT_SQL = `WITH ev AS (
    INSERT INTO webhook_events (id, type, payload)
    SELECT $1::text, $2::text, $3::jsonb
    WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.enabled AND $2::text = ANY (e.events))
    RETURNING id, type
  )
  INSERT INTO webhook_deliveries (event_id, endpoint_id)
  SELECT ev.id, e.id FROM ev JOIN webhook_endpoints e ON e.enabled AND ev.type = ANY (e.events)`;

/**
 * EMIT_EVENT_SQL for several events at once ($1: a JSON array of `{id, type, payload}`): each is
 * stored for the enabled endpoints subscribed to its type, with their deliveries.
 */
const EMIT_EVENTS_SQL = `WITH x AS (
    SELECT e->>'id' AS id, e->>'type' AS type, e->'payload' AS payload
    FROM jsonb_array_elements($1::jsonb) e
  ), ev AS (
    INSERT INTO webhook_events (id, type, payload)
    SELECT x.id, x.type, x.payload FROM x
    WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.enabled AND x.type = ANY (e.events))
    RETURNING id, type
  )
  INSERT INTO webhook_deliveries (event_id, endpoint_id)
  SELECT ev.id, e.id FROM ev JOIN webhook_endpoints e ON e.enabled AND ev.type = ANY (e.events)`;

/** Webhooks and their deliveries in the store. */
export function createWebhookRepository(sql: SqlClient): WebhookRepository {
  return {
    async create(e) {
      const r = await sql.query<EndpointRow>(
        `INSERT INTO webhook_endpoints (id, url, events, secret, description, enabled, created_by)
         VALUES ($1, $2, $3::text[], $4, $5, $6, $7) RETURNING ${ENDPOINT_COLUMNS}`,
        [e.id, e.url, e.events, e.secret, e.description, e.enabled, e.created_by],
      );
      return toEndpoint(r.rows[0] as EndpointRow);
    },
    async get(id) {
      const r = await sql.query<EndpointRow>(
        `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1`,
        [id],
      );
      return r.rows[0] ? toEndpoint(r.rows[0]) : null;
    },
    async list() {
      const r = await sql.query<EndpointRow>(
        `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints ORDER BY created_at, id`,
      );
      return r.rows.map(toEndpoint);
    },
    async update(id, patch) {
      const sets: string[] = ['updated_at = now()'];
      const params: unknown[] = [id];
      const p = (v: unknown) => {
        params.push(v);
        return `$${params.length}`;
      };
      if (patch.url !== undefined) sets.push(`url = ${p(patch.url)}`);
      if (patch.events !== undefined) sets.push(`events = ${p(patch.events)}::text[]`);
      if (patch.description !== undefined) sets.push(`description = ${p(patch.description)}`);
      if (patch.enabled !== undefined) {
        sets.push(`enabled = ${p(patch.enabled)}`);
        // re-enabled: a fresh start (failing_since counts again from the next failure)
        if (patch.enabled) sets.push('disabled_reason = NULL', 'failing_since = NULL');
      }
      const r = await sql.query<EndpointRow>(
        `UPDATE webhook_endpoints SET ${sets.join(', ')} WHERE id = $1 RETURNING ${ENDPOINT_COLUMNS}`,
        params,
      );
      return r.rows[0] ? toEndpoint(r.rows[0]) : null;
    },
    async remove(id) {
      const r = await sql.query('DELETE FROM webhook_endpoints WHERE id = $1', [id]);
      return r.rowCount === 1;
    },
    async attempts(endpointId, q) {
      const limit = Math.max(1, Math.min(200, Math.trunc(q.limit)));
      const params: unknown[] = [endpointId, limit + 1];
      let after = '';
      if (q.cursor !== undefined) {
        const [id] = decodeCursor(q.cursor, 1) as [string];
        if (!/^\d{1,19}$/.test(id)) throw badCursor();
        params.push(id);
        after = 'AND a.id < $3::bigint';
      }
      const r = await sql.query<{
        id: string | number;
        delivery_id: string | number;
        event_id: string;
        event_type: string;
        attempt: number;
        at: unknown;
        status_code: number | null;
        error: string | null;
        duration_ms: number;
        delivery_status: 'pending' | 'delivered' | 'failed';
      }>(
        `SELECT a.id, a.delivery_id, d.event_id, ev.type AS event_type, a.attempt, a.at,
           a.status_code, a.error, a.duration_ms, d.status AS delivery_status
         FROM webhook_attempts a
         JOIN webhook_deliveries d ON d.id = a.delivery_id
         JOIN webhook_events ev ON ev.id = d.event_id
         WHERE a.endpoint_id = $1 ${after}
         ORDER BY a.id DESC LIMIT $2`,
        params,
      );
      const rows = r.rows.slice(0, limit);
      const items = rows.map((x) => ({
        ...x,
        id: String(x.id),
        delivery_id: String(x.delivery_id),
        at: iso(x.at),
      }));
      const last = items[items.length - 1];
      return {
        items,
        next_cursor: r.rows.length > limit && last ? encodeCursor([last.id]) : null,
      };
    },
    async claim(limit, leaseMs) {
      const r = await sql.query<{
        id: string | number;
        event_id: string;
        endpoint_id: string;
        attempts: number;
        created_at: unknown;
        url: string;
        secret: string;
        body: string;
      }>(
        `WITH due AS (
           SELECT d.id FROM webhook_deliveries d
           WHERE d.status = 'pending' AND d.next_attempt_at <= now()
             AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = d.endpoint_id AND e.enabled)
           ORDER BY d.next_attempt_at LIMIT $1
           FOR UPDATE SKIP LOCKED
         )
         UPDATE webhook_deliveries d
           SET attempts = d.attempts + 1, last_attempt_at = now(),
               next_attempt_at = now() + $2::int * interval '1 millisecond'
         FROM due, webhook_endpoints e, webhook_events ev
         WHERE d.id = due.id AND e.id = d.endpoint_id AND ev.id = d.event_id
         RETURNING d.id, d.event_id, d.endpoint_id, d.attempts, d.created_at, e.url, e.secret,
           ev.payload::text AS body`,
        [limit, Math.max(1, Math.trunc(leaseMs))],
      );
      return r.rows.map((x) => ({
        id: String(x.id),
        event_id: x.event_id,
        endpoint_id: x.endpoint_id,
        attempt: x.attempts,
        created_at: new Date(iso(x.created_at)),
        url: x.url,
        secret: x.secret,
        body: x.body,
      }));
    },
    async delivered(d, statusCode, durationMs) {
      await sql.transaction(async (tx) => {
        await tx.query(
          `INSERT INTO webhook_attempts (delivery_id, endpoint_id, attempt, status_code, duration_ms)
           VALUES ($1, $2, $3, $4, $5)`,
          [d.id, d.endpoint_id, d.attempt, statusCode, Math.round(durationMs)],
        );
        await tx.query(
          `UPDATE webhook_deliveries SET status = 'delivered', delivered_at = now()
           WHERE id = $1 AND status = 'pending'`,
          [d.id],
        );
        await tx.query(
          'UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL',
          [d.endpoint_id],
        );
      });
    },
    async failed(d, o) {
      return sql.transaction(async (tx) => {
        await tx.query(
          `INSERT INTO webhook_attempts (delivery_id, endpoint_id, attempt, status_code, error, duration_ms)
           VALUES ($1, $2, $3, $4, $5, $6)`,
          [
            d.id,
            d.endpoint_id,
            d.attempt,
            o.statusCode,
            o.error.slice(0, 500),
            Math.round(o.durationMs),
          ],
        );
        await tx.query(
          o.retryAt
            ? `UPDATE webhook_deliveries SET next_attempt_at = $2 WHERE id = $1 AND status = 'pending'`
            : `UPDATE webhook_deliveries SET status = 'failed' WHERE id = $1 AND status = 'pending'`,
          o.retryAt ? [d.id, o.retryAt] : [d.id],
        );
        const r = await tx.query<{ id: string }>(
          `UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, now())
           WHERE id = $1
           RETURNING id, enabled AND (
             failing_since <= now() - $2::bigint * interval '1 millisecond'
             OR ($3::boolean AND failing_since <= (
               SELECT min(a.at) FROM webhook_attempts a WHERE a.delivery_id = $4::bigint))
           ) AS expired`,
          [d.endpoint_id, Math.max(0, Math.trunc(o.disableAfterMs)), o.retryAt === null, d.id],
        );
        const expired = (r.rows[0] as { expired?: boolean } | undefined)?.expired === true;
        if (!expired) return { disabled: false };
        const off = await tx.query(
          `UPDATE webhook_endpoints SET enabled = false, updated_at = now(),
             disabled_reason = 'failing since ' || to_char(failing_since AT TIME ZONE 'UTC',
               'YYYY-MM-DD"T"HH24:MI:SS"Z"')
           WHERE id = $1 AND enabled`,
          [d.endpoint_id],
        );
        return { disabled: off.rowCount === 1 };
      });
    },
    async purge(before, limit) {
      const r = await sql.query(
        `DELETE FROM webhook_events WHERE id IN (
           SELECT ev.id FROM webhook_events ev
           WHERE ev.created_at < $1 AND NOT EXISTS (
             SELECT 1 FROM webhook_deliveries d WHERE d.event_id = ev.id AND d.status = 'pending')
           ORDER BY ev.created_at LIMIT $2)`,
        [before, limit],
      );
      return r.rowCount;
    },
  };
}

/** Stores an event for the enabled endpoints subscribed to `type` (on `sql`, which may be a tx). */
export async function emitEventSql(
  sql: SqlClient,
  e: { id: string; type: string; payload: unknown },
): Promise<number> {
  const r = await sql.query(EMIT_EVENT_SQL, [e.id, e.type, jsonParam(e.payload)], 'webhook_emit');
  return r.rowCount;
}

/**
 * Stores several events for the enabled endpoints subscribed to each (on `sql`, which may be a
 * tx), in one statement; answers the deliveries queued. Nothing is written for none.
 */
export async function emitEventsSql(
  sql: SqlClient,
  events: { id: string; type: string; payload: unknown }[],
): Promise<number> {
  if (events.length === 0) return 0;
  const r = await sql.query(EMIT_EVENTS_SQL, [jsonParam(events)], 'webhook_emit_many');
  return r.rowCount;
}

import type { QuarantineRecord } from '@trawl/contracts';
import { iso, isoOrNull } from './rows.ts';
import type { SqlClient } from './types.ts';

/**
 * The originals of quarantined messages (issue 32, migration 014), for a release that delivers
 * each one once. Written once for PostgreSQL and PGlite.
 */
export interface NewQuarantined {
  id: string;
  retriever: string;
  message_ref: string;
  job_id: string | null;
  envelope_from: string;
  recipients: string[];
  subject: string;
  /** The original, base64. */
  raw: string;
  size: number;
}

/** A message claimed for delivery: what the filter needs to deliver it. */
export interface ClaimedRelease extends QuarantineRecord {
  raw: string;
}

export type ReleaseClaim =
  | { kind: 'claimed'; message: ClaimedRelease }
  /** Released already, or a release in progress (`state`): a second release is refused. */
  | { kind: 'refused'; record: QuarantineRecord }
  | { kind: 'missing' };

export interface QuarantineRepository {
  /** Records a quarantined message; a second record of the same (retriever, message) is the first. */
  add(m: NewQuarantined): Promise<QuarantineRecord>;
  get(id: string): Promise<QuarantineRecord | null>;
  /** Newest first; `job_id` narrows to one job's messages. */
  list(q: { limit: number; job_id?: string }): Promise<QuarantineRecord[]>;
  /**
   * Claims a held message for delivery by `by` (one statement: two releases at once cannot both
   * win). A claim older than `staleMs` (its gateway died before the filter answered) is taken again.
   */
  claim(id: string, by: string, staleMs: number): Promise<ReleaseClaim>;
  /** The claimed message was delivered: released, its original dropped. */
  released(id: string): Promise<QuarantineRecord | null>;
  /** The delivery failed: held again, releasable later. */
  unclaim(id: string): Promise<void>;
}

interface Row {
  id: string;
  retriever: string;
  job_id: string | null;
  envelope_from: string;
  recipients: string[];
  subject: string;
  size: number | string;
  quarantined_at: unknown;
  state: QuarantineRecord['state'];
  released_at: unknown;
  released_by: string | null;
  raw?: string | null;
}

const COLUMNS = `id::text, retriever, job_id::text, envelope_from, recipients, subject, size,
  quarantined_at, state, released_at, released_by`;

function record(r: Row): QuarantineRecord {
  return {
    id: r.id,
    retriever: r.retriever,
    job_id: r.job_id,
    envelope_from: r.envelope_from,
    recipients: r.recipients,
    subject: r.subject,
    size: Number(r.size),
    quarantined_at: iso(r.quarantined_at),
    state: r.state,
    released_at: isoOrNull(r.released_at),
    released_by: r.released_by,
  };
}

export function createQuarantineRepository(sql: SqlClient): QuarantineRepository {
  const get = async (id: string) => {
    const r = await sql.query<Row>(`SELECT ${COLUMNS} FROM quarantined_messages WHERE id = $1`, [
      id,
    ]);
    return r.rows[0] ? record(r.rows[0]) : null;
  };
  return {
    async add(m) {
      const r = await sql.query<Row>(
        `INSERT INTO quarantined_messages
           (id, retriever, message_ref, job_id, envelope_from, recipients, subject, raw, size)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (retriever, message_ref) DO UPDATE SET job_id =
           COALESCE(quarantined_messages.job_id, EXCLUDED.job_id)
         RETURNING ${COLUMNS}`,
        [
          m.id,
          m.retriever,
          m.message_ref,
          m.job_id,
          m.envelope_from,
          m.recipients,
          m.subject,
          m.raw,
          m.size,
        ],
      );
      return record(r.rows[0] as Row);
    },
    get,
    async list(q) {
      const r = q.job_id
        ? await sql.query<Row>(
            `SELECT ${COLUMNS} FROM quarantined_messages WHERE job_id = $1
             ORDER BY quarantined_at DESC, id LIMIT $2`,
            [q.job_id, q.limit],
          )
        : await sql.query<Row>(
            `SELECT ${COLUMNS} FROM quarantined_messages ORDER BY quarantined_at DESC, id LIMIT $1`,
            [q.limit],
          );
      return r.rows.map(record);
    },
    async claim(id, by, staleMs) {
      const r = await sql.query<Row>(
        `UPDATE quarantined_messages
            SET state = 'releasing', release_claimed_at = now(), released_by = $2
          WHERE id = $1 AND raw IS NOT NULL
            AND (state = 'held' OR (state = 'releasing'
                 AND release_claimed_at < now() - ($3::double precision * interval '1 millisecond')))
          RETURNING ${COLUMNS}, raw`,
        [id, by, staleMs],
      );
      const row = r.rows[0];
      if (row) return { kind: 'claimed', message: { ...record(row), raw: row.raw as string } };
      const now = await get(id);
      return now ? { kind: 'refused', record: now } : { kind: 'missing' };
    },
    async released(id) {
      const r = await sql.query<Row>(
        `UPDATE quarantined_messages
            SET state = 'released', released_at = now(), raw = NULL
          WHERE id = $1 AND state = 'releasing'
          RETURNING ${COLUMNS}`,
        [id],
      );
      return r.rows[0] ? record(r.rows[0]) : null;
    },
    async unclaim(id) {
      await sql.query(
        `UPDATE quarantined_messages
            SET state = 'held', release_claimed_at = NULL, released_by = NULL
          WHERE id = $1 AND state = 'releasing'`,
        [id],
      );
    },
  };
}

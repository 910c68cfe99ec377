import { isoOrNull } from './rows.ts';
import type { SqlClient } from './types.ts';

/** What the message view reads of a job (issue 16). */
export interface StoredMessage {
  /** The stored Email: its JSON text (a parsed value where a driver parses the column). */
  email: unknown;
  /** When the retention purge removed the body (null: still there). */
  body_purged_at: string | null;
}

export interface MessageRepository {
  /** The job's stored Email and whether its body was purged; null for an unknown job. */
  get(jobId: string): Promise<StoredMessage | null>;
}

export function createMessageRepository(sql: SqlClient): MessageRepository {
  return {
    async get(jobId) {
      const r = await sql.query<{ email: unknown; body_purged_at: unknown }>(
        // the JSON text: a large message is read (parsed, validated) off the HTTP thread
        'SELECT email::text AS email, body_purged_at FROM jobs WHERE job_id = $1',
        [jobId],
        'message_get',
      );
      const row = r.rows[0];
      return row ? { email: row.email, body_purged_at: isoOrNull(row.body_purged_at) } : null;
    },
  };
}

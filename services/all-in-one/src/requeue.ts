import { AnalysisRequestMessage, type Topology } from '@trawl/contracts';
import type { Broker, SqlClient } from '@trawl/platform';

interface Row {
  job_id: string;
  email_id: string;
  workflow_id: string;
  origin: unknown;
  created_at: unknown;
  /** created_at as text: full microsecond precision for the keyset. */
  created_key: string;
}

function json(v: unknown): unknown {
  return typeof v === 'string' ? JSON.parse(v) : v;
}

function iso(v: unknown): string {
  return v instanceof Date ? v.toISOString() : new Date(String(v)).toISOString();
}

/**
 * The in-process broker does not survive a restart: publishes again every job the store still holds
 * as `queued` or `processing` (oldest first), so nothing submitted before a stop is lost. A job that
 * was `processing` runs again from the start (claim accepts processing → processing). The messages
 * are claim checks, as the gateway publishes them (ADR 005): the orchestrator reads the Email from
 * the row, and fails a job whose stored Email is not valid. Answers how many jobs were re-queued;
 * rows whose message would not parse are skipped (reported through onSkip).
 */
export async function requeueUnfinished(deps: {
  sql: SqlClient;
  broker: Broker;
  topology: Topology;
  onSkip?: (jobId: string, reason: string) => void;
  pageSize?: number;
}): Promise<number> {
  const pageSize = deps.pageSize ?? 500;
  let count = 0;
  let after: { created_at: string; job_id: string } | undefined;
  for (;;) {
    const params: unknown[] = [pageSize];
    let where = `status IN ('queued', 'processing')`;
    if (after) {
      where += ' AND (created_at, job_id) > ($2::timestamptz, $3::uuid)';
      params.push(after.created_at, after.job_id);
    }
    const r = await deps.sql.query<Row>(
      `SELECT job_id, email_id, workflow_id, origin, created_at, created_at::text AS created_key
       FROM jobs
       WHERE ${where} ORDER BY created_at, job_id LIMIT $1`,
      params,
    );
    for (const row of r.rows) {
      const candidate = {
        job_id: row.job_id,
        email_id: row.email_id,
        workflow_id: row.workflow_id,
        submitted_at: iso(row.created_at),
        ...(row.origin ? { origin: json(row.origin) } : {}),
      };
      const parsed = AnalysisRequestMessage.safeParse(candidate);
      if (!parsed.success) {
        deps.onSkip?.(row.job_id, parsed.error.message.slice(0, 200));
        continue;
      }
      await deps.broker.publish(
        deps.topology.exchanges.analysis,
        deps.topology.routingKeys.analysisRequested,
        parsed.data,
        { messageId: row.job_id, persistent: true },
      );
      count++;
    }
    const last = r.rows[r.rows.length - 1];
    if (!last || r.rows.length < pageSize) break;
    after = { created_at: last.created_key, job_id: last.job_id };
  }
  return count;
}

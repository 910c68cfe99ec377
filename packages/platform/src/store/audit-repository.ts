import { badCursor } from '../errors.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import type { AuditRecord, AuditRepository } from './repositories.ts';
import { iso, json } from './rows.ts';
import type { SqlClient } from './types.ts';

interface AuditRow {
  id: string | number;
  at: unknown;
  actor: string | null;
  action: string;
  target: string | null;
  outcome: 'success' | 'failure';
  address: string | null;
  request_id: string | null;
  details: unknown;
}

function toRecord(r: AuditRow): AuditRecord {
  const rec: AuditRecord = {
    id: String(r.id),
    at: iso(r.at),
    actor: r.actor,
    action: r.action,
    target: r.target,
    outcome: r.outcome,
    address: r.address,
    request_id: r.request_id,
  };
  if (r.details !== null) rec.details = json<Record<string, unknown>>(r.details);
  return rec;
}

export function createAuditRepository(sql: SqlClient): AuditRepository {
  return {
    async append(e) {
      await sql.query(
        `INSERT INTO audit_log (actor, action, target, outcome, address, request_id, details)
         VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)`,
        [
          e.actor,
          e.action,
          e.target,
          e.outcome,
          e.address,
          e.request_id,
          e.details === undefined ? null : JSON.stringify(e.details),
        ],
      );
    },
    async list(q) {
      const limit = Math.max(1, Math.min(1000, Math.trunc(q.limit)));
      const where: string[] = [];
      const params: unknown[] = [];
      if (q.cursor !== undefined) {
        const [id] = decodeCursor(q.cursor, 1) as [string];
        if (!/^\d{1,18}$/.test(id)) throw badCursor();
        params.push(id);
        where.push(`id < $${params.length}::bigint`);
      }
      if (q.action !== undefined) {
        params.push(q.action);
        where.push(`action = $${params.length}`);
      }
      if (q.actor !== undefined) {
        params.push(q.actor);
        where.push(`actor = $${params.length}`);
      }
      params.push(limit + 1);
      const r = await sql.query<AuditRow>(
        `SELECT id::text AS id, at, actor, action, target, outcome, address, request_id, details
         FROM audit_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
         ORDER BY id DESC LIMIT $${params.length}`,
        params,
      );
      const rows = r.rows.slice(0, limit);
      const last = rows[rows.length - 1];
      return {
        items: rows.map(toRecord),
        next_cursor: r.rows.length > limit && last ? encodeCursor([String(last.id)]) : null,
      };
    },
  };
}

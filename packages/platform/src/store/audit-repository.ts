import { badCursor } from '../errors.ts';
import { AUDIT_GENESIS_HASH, auditRowHash, canonicalJson } from './audit-hash.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import type {
  AuditEntry,
  AuditRecord,
  AuditRepository,
  AuditVerification,
} from './repositories.ts';
import { iso, json } from './rows.ts';
import { storableText } from './storable-text.ts';
import type { SqlClient } from './types.ts';

/** A row as read: the entry's columns, the id and time as the driver gives them, details as stored. */
type AuditRow = Omit<AuditEntry, 'details'> & {
  id: string | number;
  at: unknown;
  details: unknown;
  prev_hash: string | null;
  hash: string | null;
};

interface ChainRow {
  anchor_id: string;
  anchor_hash: string;
  head_id: string;
  head_hash: string;
}

const ROW_COLS =
  'id::text AS id, at, actor, action, target, outcome, address, request_id, details, prev_hash, hash';
const CHAIN_COLS = 'anchor_id::text AS anchor_id, anchor_hash, head_id::text AS head_id, head_hash';
/** Rows verified per query. */
const VERIFY_PAGE = 500;
/** Rows purged per transaction (appends wait for the chain lock meanwhile). */
const PURGE_BATCH = 5000;

/** A row's stored content, as the record shows it and its hash covers it. */
function contentOf(r: AuditRow, id: string) {
  return {
    id,
    at: iso(r.at),
    actor: r.actor,
    action: r.action,
    target: r.target,
    outcome: r.outcome,
    address: r.address,
    request_id: r.request_id,
  };
}

function toRecord(r: AuditRow): AuditRecord {
  const rec: AuditRecord = { ...contentOf(r, String(r.id)), prev_hash: r.prev_hash, hash: r.hash };
  if (r.details !== null) rec.details = json<Record<string, unknown>>(r.details);
  return rec;
}

const text = (s: string | null): string | null => (s === null ? null : storableText(s));

/** The entry as it will be stored: storable strings, canonical details. */
function storable(e: AuditEntry) {
  return {
    actor: text(e.actor),
    action: storableText(e.action),
    target: text(e.target),
    outcome: e.outcome,
    address: text(e.address),
    request_id: text(e.request_id),
    details:
      e.details === undefined
        ? null
        : (canonicalJson(JSON.parse(JSON.stringify(e.details))) as Record<string, unknown>),
  };
}

async function chainRow(sql: SqlClient, lock: boolean): Promise<ChainRow> {
  const r = await sql.query<ChainRow>(
    `SELECT ${CHAIN_COLS} FROM audit_chain WHERE id = 1${lock ? ' FOR UPDATE' : ''}`,
  );
  const row = r.rows[0];
  if (!row) throw new Error('audit_chain has no row: the database is not migrated');
  return row;
}

export function createAuditRepository(sql: SqlClient): AuditRepository {
  return {
    async append(e) {
      const s = storable(e);
      const at = new Date().toISOString();
      return sql.transaction(async (tx) => {
        // One chain across every replica: appends take the chain's row lock in turn.
        const chain = await chainRow(tx, true);
        const idRow = await tx.query<{ id: string }>(
          `SELECT nextval(pg_get_serial_sequence('audit_log', 'id'))::text AS id`,
        );
        const id = idRow.rows[0]?.id as string;
        const hash = auditRowHash({ id, at, ...s, prev_hash: chain.head_hash });
        await tx.query(
          `INSERT INTO audit_log
             (id, at, actor, action, target, outcome, address, request_id, details, prev_hash, hash)
           VALUES ($1::bigint, $2::timestamptz, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11)`,
          [
            id,
            at,
            s.actor,
            s.action,
            s.target,
            s.outcome,
            s.address,
            s.request_id,
            s.details === null ? null : JSON.stringify(s.details),
            chain.head_hash,
            hash,
          ],
        );
        await tx.query('UPDATE audit_chain SET head_id = $1::bigint, head_hash = $2 WHERE id = 1', [
          id,
          hash,
        ]);
        return { id, hash };
      });
    },

    async list(q) {
      const limit = Math.max(1, Math.min(1000, Math.trunc(q.limit)));
      const where: string[] = [];
      const params: unknown[] = [];
      if (q.cursor !== undefined) {
        const [id] = decodeCursor(q.cursor, 1) as [string];
        if (!/^\d{1,18}$/.test(id)) throw badCursor();
        params.push(id);
        where.push(`audit_log.id < $${params.length}::bigint`);
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
      // ORDER BY the bigint column, not the text alias of the select list (id 1000 sorts after 999).
      const r = await sql.query<AuditRow>(
        `SELECT ${ROW_COLS}
         FROM audit_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
         ORDER BY audit_log.id DESC LIMIT $${params.length}`,
        params,
      );
      const rows = r.rows.slice(0, limit);
      const last = rows[rows.length - 1];
      return {
        items: rows.map(toRecord),
        next_cursor: r.rows.length > limit && last ? encodeCursor([String(last.id)]) : null,
      };
    },

    async verify() {
      return sql.transaction(async (tx): Promise<AuditVerification> => {
        // One snapshot: appends and purges made meanwhile are not seen half-way.
        await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
        const chain = await chainRow(tx, false);
        const unchained = await tx.query<{ n: number | string }>(
          'SELECT count(*) AS n FROM audit_log WHERE id <= $1::bigint',
          [chain.anchor_id],
        );
        const base = {
          anchor: { id: chain.anchor_id, hash: chain.anchor_hash },
          head: { id: chain.head_id, hash: chain.head_hash },
          unchained: Number(unchained.rows[0]?.n ?? 0),
        };
        let expected = chain.anchor_hash;
        let lastId = chain.anchor_id;
        let checked = 0;
        const broken = (id: string, reason: string): AuditVerification => ({
          ok: false,
          checked,
          ...base,
          broken: { id, reason },
        });
        for (;;) {
          const page = await tx.query<AuditRow>(
            `SELECT ${ROW_COLS} FROM audit_log
             WHERE audit_log.id > $1::bigint ORDER BY audit_log.id LIMIT ${VERIFY_PAGE}`,
            [lastId],
          );
          for (const r of page.rows) {
            const id = String(r.id);
            if (BigInt(id) > BigInt(chain.head_id)) {
              return broken(id, 'a row after the chain head (inserted around the chain)');
            }
            if (r.prev_hash !== expected) {
              return broken(
                id,
                'its prev_hash is not the hash of the row before it (rows removed)',
              );
            }
            const recomputed = auditRowHash({
              ...contentOf(r, id),
              details: r.details === null ? null : json<unknown>(r.details),
              prev_hash: r.prev_hash,
            });
            if (recomputed !== r.hash) return broken(id, 'its content does not match its hash');
            expected = r.hash;
            lastId = id;
            checked++;
          }
          if (page.rows.length < VERIFY_PAGE) break;
        }
        if (lastId !== chain.head_id || expected !== chain.head_hash) {
          return broken(chain.head_id, 'the chain head is missing (rows removed from the end)');
        }
        return { ok: true, checked, ...base };
      });
    },

    async purge(before) {
      let total = 0;
      for (;;) {
        const n = await sql.transaction(async (tx) => {
          const chain = await chainRow(tx, true);
          const cut = await tx.query<{ id: string | null }>(
            `SELECT max(id)::text AS id FROM (
               SELECT id FROM audit_log WHERE at < $1::timestamptz ORDER BY id LIMIT ${PURGE_BATCH}
             ) oldest`,
            [before.toISOString()],
          );
          const cutId = cut.rows[0]?.id ?? null;
          if (cutId === null) return 0;
          if (BigInt(cutId) > BigInt(chain.anchor_id)) {
            // The chain now starts after the newest purged row: remember where and from which hash.
            const h = await tx.query<{ hash: string | null }>(
              'SELECT hash FROM audit_log WHERE id = $1::bigint',
              [cutId],
            );
            await tx.query(
              'UPDATE audit_chain SET anchor_id = $1::bigint, anchor_hash = $2 WHERE id = 1',
              [cutId, h.rows[0]?.hash ?? AUDIT_GENESIS_HASH],
            );
          }
          const d = await tx.query('DELETE FROM audit_log WHERE id <= $1::bigint', [cutId]);
          return d.rowCount;
        });
        total += n;
        if (n < PURGE_BATCH) return total;
      }
    },
  };
}

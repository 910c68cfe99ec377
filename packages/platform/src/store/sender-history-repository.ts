import type { SenderHistoryRepository, SenderStats } from './repositories.ts';
import { iso } from './rows.ts';
import type { SqlClient } from './types.ts';

interface StatsRow {
  address: string;
  first_seen: unknown;
  last_seen: unknown;
  message_count: number | string;
  phishing_count: number | string;
}

function toStats(r: StatsRow): SenderStats {
  return {
    address: r.address,
    first_seen: iso(r.first_seen),
    last_seen: iso(r.last_seen),
    message_count: Number(r.message_count),
    phishing_count: Number(r.phishing_count),
  };
}

function domainOf(address: string): string {
  const at = address.lastIndexOf('@');
  return at >= 0 ? address.slice(at + 1) : '';
}

/** The key of a sender's row: the address trimmed and lower-cased, and its domain. */
export function senderKey(address: string): { address: string; domain: string } {
  const a = address.trim().toLowerCase();
  return { address: a, domain: domainOf(a) };
}

/**
 * Upsert of sender rows (address, domain, first_seen, last_seen, message_count, phishing_count)
 * given as `rows`: counts add up, first and last seen widen. Shared with `jobs.finish`.
 */
export function senderUpsertSql(rows: string): string {
  return `INSERT INTO sender_history (address, domain, first_seen, last_seen, message_count, phishing_count)
         ${rows}
         ON CONFLICT (address) DO UPDATE SET
           first_seen = LEAST(sender_history.first_seen, EXCLUDED.first_seen),
           last_seen = GREATEST(sender_history.last_seen, EXCLUDED.last_seen),
           message_count = sender_history.message_count + EXCLUDED.message_count,
           phishing_count = sender_history.phishing_count + EXCLUDED.phishing_count`;
}

const RECORD_SQL = senderUpsertSql('VALUES ($1, $2, $3, $3, 1, $4)');

export function createSenderHistoryRepository(sql: SqlClient): SenderHistoryRepository {
  return {
    async record(address, at, isPhishing) {
      const k = senderKey(address);
      await sql.query(RECORD_SQL, [k.address, k.domain, at, isPhishing === true ? 1 : 0]);
    },
    async get(address) {
      const { address: a, domain } = senderKey(address);
      const s = await sql.query<StatsRow>(
        `SELECT address, first_seen, last_seen, message_count, phishing_count
         FROM sender_history WHERE address = $1`,
        [a],
      );
      const d = await sql.query<StatsRow>(
        `SELECT '@' || $1 AS address, min(first_seen) AS first_seen, max(last_seen) AS last_seen,
           sum(message_count)::int AS message_count, sum(phishing_count)::int AS phishing_count
         FROM sender_history WHERE domain = $1 HAVING count(*) > 0`,
        [domain],
      );
      return {
        sender: s.rows[0] ? toStats(s.rows[0]) : null,
        domain: domain && d.rows[0] ? toStats(d.rows[0]) : null,
      };
    },
  };
}

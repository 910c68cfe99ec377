import type { CreateListEntry, ListEntry, ListKind, ListName } from '@trawl/contracts';
import { storeConflict } from '../errors.ts';
import { iso, isoOrNull } from './rows.ts';
import type { SqlClient } from './types.ts';

/** An entry as the analyzers match it: its list, kind, value, note and expiry (ms, or null). */
export interface LiveListEntry {
  id: string;
  list: ListName;
  kind: ListKind;
  value: string;
  note: string | null;
  expires_at_ms: number | null;
}

/**
 * The allow and block lists (issue 32, migration 013). An admin adds and removes entries through
 * the API; the analyzers read every entry that has not expired (`live`) into memory, again when a
 * `lists.changed` control event tells them the table changed.
 */
export interface ListRepository {
  /** Adds an entry; TRAWL_ERR_STORE_CONFLICT when the list already holds that kind and value. */
  add(e: CreateListEntry & { id: string; created_by: string | null }): Promise<ListEntry>;
  get(id: string): Promise<ListEntry | null>;
  /** Every entry (expired ones included), newest first, of one list and / or kind. */
  list(
    q?: { list?: ListName | undefined; kind?: ListKind | undefined },
    now?: Date,
  ): Promise<ListEntry[]>;
  /** Removes an entry; answers it, or null when there was none. */
  remove(id: string): Promise<ListEntry | null>;
  /** The entries that have not expired at `now`: what the analyzers match against. */
  live(now: Date): Promise<LiveListEntry[]>;
}

interface Row {
  id: string;
  list: ListName;
  kind: ListKind;
  value: string;
  note: string | null;
  created_by: string | null;
  created_at: unknown;
  expires_at: unknown;
}

const COLUMNS = 'id, list, kind, value, note, created_by, created_at, expires_at';

function entryOf(r: Row, now: Date): ListEntry {
  const expires = isoOrNull(r.expires_at);
  return {
    id: r.id,
    list: r.list,
    kind: r.kind,
    value: r.value,
    note: r.note,
    created_by: r.created_by,
    created_at: iso(r.created_at),
    expires_at: expires,
    expired: expires !== null && Date.parse(expires) <= now.getTime(),
  };
}

/** The allow and block lists in the store. */
export function createListRepository(sql: SqlClient): ListRepository {
  return {
    async add(e) {
      try {
        const r = await sql.query<Row>(
          `INSERT INTO list_entries (id, list, kind, value, note, created_by, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7::timestamptz) RETURNING ${COLUMNS}`,
          [e.id, e.list, e.kind, e.value, e.note ?? null, e.created_by, e.expires_at ?? null],
        );
        return entryOf(r.rows[0] as Row, new Date());
      } catch (err) {
        if ((err as { code?: unknown }).code === '23505')
          throw storeConflict(`the ${e.list} list already holds ${e.kind} ${e.value}`);
        throw err;
      }
    },
    async get(id) {
      const r = await sql.query<Row>(`SELECT ${COLUMNS} FROM list_entries WHERE id = $1`, [id]);
      return r.rows[0] ? entryOf(r.rows[0], new Date()) : null;
    },
    async list(q = {}, now = new Date()) {
      const where: string[] = [];
      const params: unknown[] = [];
      if (q.list) where.push(`list = $${params.push(q.list)}`);
      if (q.kind) where.push(`kind = $${params.push(q.kind)}`);
      const r = await sql.query<Row>(
        `SELECT ${COLUMNS} FROM list_entries ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
         ORDER BY created_at DESC, id DESC`,
        params,
      );
      return r.rows.map((x) => entryOf(x, now));
    },
    async remove(id) {
      const r = await sql.query<Row>(
        `DELETE FROM list_entries WHERE id = $1 RETURNING ${COLUMNS}`,
        [id],
      );
      return r.rows[0] ? entryOf(r.rows[0], new Date()) : null;
    },
    async live(now) {
      const r = await sql.query<Row>(
        `SELECT ${COLUMNS} FROM list_entries WHERE expires_at IS NULL OR expires_at > $1`,
        [now.toISOString()],
      );
      return r.rows.map((x) => ({
        id: x.id,
        list: x.list,
        kind: x.kind,
        value: x.value,
        note: x.note,
        expires_at_ms: x.expires_at === null ? null : Date.parse(iso(x.expires_at)),
      }));
    },
  };
}

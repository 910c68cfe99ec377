import { storeConflict } from '../errors.ts';
import type { Role, User, UserRepository, UserWithHash } from './repositories.ts';
import { iso, json } from './rows.ts';
import type { SqlClient } from './types.ts';

interface UserRow {
  username: string;
  password_hash: string;
  roles: unknown;
  disabled: boolean;
  created_at: unknown;
  updated_at: unknown;
  auth_version?: number | string;
}

function toUser(r: UserRow): User {
  return {
    username: r.username,
    roles: json<Role[]>(r.roles),
    disabled: r.disabled,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

const COLS = 'username, password_hash, roles, disabled, created_at, updated_at';
const COLS_WITH_VERSION = `${COLS}, auth_version`;

export function createUserRepository(sql: SqlClient): UserRepository {
  return {
    async create(u) {
      try {
        const r = await sql.query<UserRow>(
          `INSERT INTO users (username, password_hash, roles) VALUES ($1, $2, $3::jsonb) RETURNING ${COLS}`,
          [u.username, u.password_hash, JSON.stringify(u.roles)],
        );
        return toUser(r.rows[0] as UserRow);
      } catch (err) {
        if ((err as { code?: unknown }).code === '23505')
          throw storeConflict(`user ${u.username} exists`);
        throw err;
      }
    },
    async get(username) {
      const r = await sql.query<UserRow>(
        `SELECT ${COLS_WITH_VERSION} FROM users WHERE username = $1`,
        [username],
      );
      const row = r.rows[0];
      return row
        ? ({
            ...toUser(row),
            password_hash: row.password_hash,
            auth_version: Number(row.auth_version ?? 1),
          } satisfies UserWithHash)
        : null;
    },
    async accessVersion(username) {
      const r = await sql.query<{ auth_version: number | string; disabled: boolean }>(
        'SELECT auth_version, disabled FROM users WHERE username = $1',
        [username],
        'trawl_user_access_version',
      );
      const row = r.rows[0];
      return row && !row.disabled ? Number(row.auth_version) : null;
    },
    async list() {
      const r = await sql.query<UserRow>(`SELECT ${COLS} FROM users ORDER BY username`);
      return r.rows.map(toUser);
    },
    async update(username, patch) {
      const r = await sql.query<UserRow>(
        `UPDATE users SET
           password_hash = COALESCE($2, password_hash),
           roles = COALESCE($3::jsonb, roles),
           disabled = COALESCE($4, disabled),
           auth_version = auth_version + 1,
           updated_at = now()
         WHERE username = $1 RETURNING ${COLS}`,
        [
          username,
          patch.password_hash ?? null,
          patch.roles === undefined ? null : JSON.stringify(patch.roles),
          patch.disabled ?? null,
        ],
      );
      return r.rows[0] ? toUser(r.rows[0]) : null;
    },
    async rehash(username, oldHash, newHash) {
      const r = await sql.query(
        'UPDATE users SET password_hash = $3 WHERE username = $1 AND password_hash = $2',
        [username, oldHash, newHash],
      );
      return r.rowCount === 1;
    },
    async remove(username) {
      const r = await sql.query('DELETE FROM users WHERE username = $1 RETURNING username', [
        username,
      ]);
      return r.rowCount === 1;
    },
    async count() {
      const r = await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM users');
      return Number(r.rows[0]?.n ?? 0);
    },
  };
}

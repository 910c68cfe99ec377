import type { RefreshTokenRepository } from './repositories.ts';
import type { SqlClient } from './types.ts';

export function createRefreshTokenRepository(sql: SqlClient): RefreshTokenRepository {
  return {
    async store(t) {
      await sql.query(
        `INSERT INTO refresh_tokens (token_hash, username, family_id, expires_at) VALUES ($1, $2, $3, $4)`,
        [t.token_hash, t.username, t.family_id, t.expires_at],
      );
    },
    async consume(tokenHash, now) {
      // One conditional UPDATE: of two concurrent uses exactly one gets the row.
      const r = await sql.query<{ username: string; family_id: string }>(
        `UPDATE refresh_tokens SET used_at = $2
         WHERE token_hash = $1 AND used_at IS NULL AND revoked_at IS NULL AND expires_at > $2
         RETURNING username, family_id`,
        [tokenHash, now],
      );
      const row = r.rows[0];
      if (row) return { username: row.username, family_id: row.family_id };
      // Reuse of a used token: someone holds a copy. Revoke the whole family.
      await sql.query(
        `UPDATE refresh_tokens SET revoked_at = $2
         WHERE revoked_at IS NULL AND family_id IN (
           SELECT family_id FROM refresh_tokens WHERE token_hash = $1 AND used_at IS NOT NULL)`,
        [tokenHash, now],
      );
      return null;
    },
    async revokeUser(username) {
      await sql.query(
        'UPDATE refresh_tokens SET revoked_at = now() WHERE username = $1 AND revoked_at IS NULL',
        [username],
      );
    },
  };
}

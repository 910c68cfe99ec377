import type { Store } from '@trawl/platform';
import type { Logger } from 'pino';
import { hashPassword } from './auth/passwords.ts';

/**
 * Creates the first admin from TRAWL_ADMIN_USER / TRAWL_ADMIN_PASSWORD when no user exists yet.
 * Answers true when it created one. Replicas starting together may race: a unique-key failure of the
 * loser is ignored.
 */
export async function bootstrapAdmin(
  store: Store,
  admin: { username: string | undefined; password: string | undefined },
  logger?: Logger,
): Promise<boolean> {
  if ((await store.users.count()) > 0) return false;
  if (!admin.username || !admin.password) {
    logger?.warn(
      'no user exists: set TRAWL_ADMIN_USER and TRAWL_ADMIN_PASSWORD to create the first admin',
    );
    return false;
  }
  try {
    await store.users.create({
      username: admin.username,
      password_hash: await hashPassword(admin.password),
      roles: ['admin'],
    });
  } catch (err) {
    if ((await store.users.get(admin.username)) !== null) return false;
    throw err;
  }
  await store.audit.append({
    actor: null,
    action: 'user.bootstrap',
    target: admin.username,
    outcome: 'success',
    address: null,
    request_id: null,
  });
  logger?.info({ username: admin.username }, 'first admin created');
  return true;
}

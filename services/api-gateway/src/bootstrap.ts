import { ConfigError } from '@trawl/config';
import type { Store } from '@trawl/platform';
import type { Logger } from 'pino';
import { passwordProblems } from './auth/password-policy.ts';
import { hashPassword } from './auth/passwords.ts';

/**
 * Creates the first admin from TRAWL_ADMIN_USER / TRAWL_ADMIN_PASSWORD when no user exists yet.
 * Answers true when it created one. A password that fails the password rule (password-policy.ts,
 * docs/security.md) stops the start with a ConfigError naming the rule, never the password.
 * Replicas starting together may race: a unique-key failure of the loser is ignored.
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
  const weak = passwordProblems(admin.password, admin.username);
  if (weak.length > 0) {
    throw new ConfigError(
      weak.map((message) => ({
        variable: 'TRAWL_ADMIN_PASSWORD',
        path: '/TRAWL_ADMIN_PASSWORD',
        message: `the first admin's password ${message}`,
      })),
    );
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

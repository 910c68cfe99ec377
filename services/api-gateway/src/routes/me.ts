import { parseWith } from '@trawl/contracts';
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { PASSWORD_MAX_CHARS, passwordProblems } from '../auth/password-policy.ts';
import type { GatewayContext } from '../context.ts';
import {
  databaseDown,
  ForbiddenError,
  GATEWAY_ERRORS,
  RateLimitedError,
  ValidationError,
} from '../errors.ts';

const ChangePassword = z.strictObject({
  current_password: z.string().min(1).max(PASSWORD_MAX_CHARS),
  new_password: z.string().min(1).max(PASSWORD_MAX_CHARS),
});

/**
 * POST /api/v1/me/password (issue 32): a user changes their own password, giving the current one.
 * The new one follows the password rule (docs/security.md); wrong current passwords count towards
 * the sign-in throttle of the user and address; every attempt is audited. On success every session
 * of the user ends (access tokens by their version, refresh tokens revoked): the caller signs in
 * again with the new password.
 */
export function meRoutes(ctx: GatewayContext): FastifyPluginAsync {
  return async (app) => {
    app.post('/me/password', { config: { access: { role: 'viewer' } } }, async (request) => {
      const username = request.principal!.username;
      const parsed = parseWith(ChangePassword, request.body ?? {});
      if (!parsed.ok) throw new ValidationError(parsed.problems);
      const { current_password: current, new_password: next } = parsed.value;
      const fail = (reason: string) =>
        ctx.audit.failure(request, { action: 'user.password_change', username, reason });
      const wait = await ctx.throttle.check(username, request.ip).catch(() => 0);
      if (wait > 0) {
        fail('throttled');
        throw new RateLimitedError(
          wait,
          GATEWAY_ERRORS.loginThrottled,
          'too many wrong passwords; wait before trying again',
        );
      }
      let user: Awaited<ReturnType<typeof ctx.store.users.get>>;
      try {
        user = await ctx.store.users.get(username);
      } catch (err) {
        throw databaseDown(err);
      }
      if (!user || !(await ctx.passwords.verify(current, user.password_hash))) {
        await ctx.throttle.failed(username, request.ip).catch(() => undefined);
        fail('wrong_password');
        // 403, not 401: the caller is signed in; only the password it gave is wrong
        throw new ForbiddenError('the current password is not right', GATEWAY_ERRORS.wrongPassword);
      }
      await ctx.throttle.succeeded(username, request.ip).catch(() => undefined);
      const weak = passwordProblems(next, username);
      if (next === current) weak.push('must differ from the current password');
      if (weak.length > 0) {
        fail('weak_password');
        throw new ValidationError(weak.map((message) => ({ path: '/new_password', message })));
      }
      await ctx.store.users.update(username, { password_hash: await ctx.passwords.hash(next) });
      // every session ends now, on every replica: sign in again with the new password
      await ctx.versions.changed(username, request.log);
      await ctx.store.refreshTokens.revokeUser(username);
      await ctx.audit.record(request, {
        actor: username,
        action: 'user.password_change',
        target: username,
        outcome: 'success',
      });
      return { changed: true, message: 'password changed; sign in again with the new one' };
    });
  };
}

import { randomUUID } from 'node:crypto';
import formbody from '@fastify/formbody';
import { parseWith } from '@trawl/contracts';
import type { Role } from '@trawl/platform';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { hashRefreshToken, newRefreshToken } from '../auth/tokens.ts';
import type { GatewayContext } from '../context.ts';
import {
  DependencyDownError,
  GATEWAY_ERRORS,
  RateLimitedError,
  UnauthorizedError,
  ValidationError,
} from '../errors.ts';

const PasswordGrant = z.object({
  grant_type: z.literal('password', { message: 'grant_type must be password' }).default('password'),
  username: z.string().min(1).max(256),
  password: z.string().min(1).max(1024),
  scope: z.string().optional(),
});

const RefreshGrant = z.object({
  grant_type: z.literal('refresh_token').optional(),
  refresh_token: z.string().min(1).max(512),
});

export interface TokenAnswer {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
  refresh_token: string;
}

export function authRoutes(ctx: GatewayContext): FastifyPluginAsync {
  const refreshTtlMs = ctx.config.refreshTokenExpireDays * 24 * 3600 * 1000;

  async function issue(
    user: { username: string; roles: Role[]; auth_version: number },
    familyId: string,
  ): Promise<TokenAnswer> {
    const { token, expiresIn } = await ctx.tokens.issueAccess(
      user.username,
      user.roles,
      user.auth_version,
    );
    const refresh = newRefreshToken();
    await ctx.store.refreshTokens.store({
      token_hash: refresh.hash,
      username: user.username,
      family_id: familyId,
      expires_at: new Date(ctx.now().getTime() + refreshTtlMs),
    });
    return {
      access_token: token,
      token_type: 'bearer',
      expires_in: expiresIn,
      refresh_token: refresh.token,
    };
  }

  /** A successful sign-in: one audit row each (the user is known). */
  function audited(request: FastifyRequest, username: string, action: string) {
    return ctx.audit.record(request, {
      actor: username,
      action,
      target: username,
      outcome: 'success',
    });
  }

  /** The stored hash was made with weaker parameters: replace it, the password just checked. */
  async function rehashIfNeeded(
    request: FastifyRequest,
    username: string,
    stored: string,
    password: string,
  ): Promise<void> {
    if (!ctx.passwords.needsRehash(stored)) return;
    try {
      if (await ctx.store.users.rehash(username, stored, await ctx.passwords.hash(password))) {
        request.log.info({ username }, 'password hash upgraded to the current scrypt parameters');
      }
    } catch (err) {
      request.log.warn({ err, username }, 'password rehash failed; kept the old hash');
    }
  }

  async function passwordGrant(request: FastifyRequest, body: unknown): Promise<TokenAnswer> {
    const parsed = parseWith(PasswordGrant, body);
    if (!parsed.ok)
      throw new ValidationError(
        parsed.problems,
        'username, password and grant_type=password are required',
      );
    const { username, password } = parsed.value;
    const wait = await ctx.throttle.check(username, request.ip).catch(() => 0);
    if (wait > 0) {
      ctx.audit.failure(request, { action: 'auth.login', username, reason: 'throttled' });
      throw new RateLimitedError(
        wait,
        GATEWAY_ERRORS.loginThrottled,
        'too many failed logins; wait before trying again',
      );
    }
    let user: Awaited<ReturnType<typeof ctx.store.users.get>>;
    try {
      user = await ctx.store.users.get(username);
    } catch (err) {
      throw new DependencyDownError(
        GATEWAY_ERRORS.databaseUnavailable,
        'the database is unavailable; retry later',
        err,
      );
    }
    const ok = await ctx.passwords.verify(password, user?.password_hash);
    if (!user || !ok || user.disabled) {
      await ctx.throttle
        .failed(username, request.ip)
        .catch((err: unknown) => request.log.warn({ err }, 'login throttle unavailable'));
      ctx.audit.failure(request, {
        action: 'auth.login',
        username,
        reason: !user ? 'unknown_user' : !ok ? 'wrong_password' : 'disabled',
      });
      throw new UnauthorizedError(
        GATEWAY_ERRORS.invalidCredentials,
        'invalid username or password',
      );
    }
    await ctx.throttle.succeeded(username, request.ip).catch(() => undefined);
    await rehashIfNeeded(request, user.username, user.password_hash, password);
    const answer = await issue(user, randomUUID());
    await audited(request, user.username, 'auth.login');
    return answer;
  }

  async function refreshGrant(request: FastifyRequest, body: unknown): Promise<TokenAnswer> {
    const parsed = parseWith(RefreshGrant, body);
    if (!parsed.ok) throw new ValidationError(parsed.problems, 'refresh_token is required');
    const row = await ctx.store.refreshTokens.consume(
      hashRefreshToken(parsed.value.refresh_token),
      ctx.now(),
    );
    if (!row) {
      ctx.audit.failure(request, { action: 'auth.refresh', reason: 'invalid_refresh_token' });
      throw new UnauthorizedError(GATEWAY_ERRORS.invalidRefresh, 'the refresh token is not valid');
    }
    const user = await ctx.store.users.get(row.username);
    if (!user || user.disabled) {
      ctx.audit.failure(request, {
        action: 'auth.refresh',
        username: row.username,
        reason: !user ? 'unknown_user' : 'disabled',
      });
      throw new UnauthorizedError(GATEWAY_ERRORS.invalidRefresh, 'the refresh token is not valid');
    }
    const answer = await issue(user, row.family_id);
    await audited(request, user.username, 'auth.refresh');
    return answer;
  }

  return async (app) => {
    await app.register(formbody, { bodyLimit: ctx.config.publicBodyBytes ?? 64 * 1024 });
    const noStore = { 'cache-control': 'no-store', pragma: 'no-cache' };
    // Public: anyone may try to sign in. The body limit of public routes applies (route-access.ts).
    const pub = { config: { access: 'public' } } as const;

    app.post('/auth/token', pub, async (request, reply) => {
      const body = (request.body ?? {}) as Record<string, unknown>;
      reply.headers(noStore);
      if (body.grant_type === 'refresh_token') return refreshGrant(request, body);
      return passwordGrant(request, body);
    });

    app.post('/auth/refresh', pub, async (request, reply) => {
      reply.headers(noStore);
      return refreshGrant(request, request.body ?? {});
    });

    app.get(
      '/auth/me',
      { config: { access: { role: 'viewer', service: ['self'] } } },
      async (request) => {
        const p = request.principal!;
        return { username: p.username, roles: p.roles, kind: p.kind };
      },
    );
  };
}

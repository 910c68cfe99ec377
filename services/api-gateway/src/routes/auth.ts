import { randomUUID } from 'node:crypto';
import formbody from '@fastify/formbody';
import { parseWith } from '@trawl/contracts';
import type { Role } from '@trawl/platform';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { guard } from '../auth/access.ts';
import { dummyPasswordHash, verifyPassword } from '../auth/passwords.ts';
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

  async function issue(username: string, roles: Role[], familyId: string): Promise<TokenAnswer> {
    const { token, expiresIn } = await ctx.tokens.issueAccess(username, roles);
    const refresh = newRefreshToken();
    await ctx.store.refreshTokens.store({
      token_hash: refresh.hash,
      username,
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

  function audit(
    request: FastifyRequest,
    e: {
      actor: string | null;
      action: string;
      outcome: 'success' | 'failure';
      details?: Record<string, unknown>;
    },
  ) {
    return ctx.store.audit
      .append({
        actor: e.actor,
        action: e.action,
        target: e.actor,
        outcome: e.outcome,
        address: request.ip,
        request_id: String(request.id),
        ...(e.details ? { details: e.details } : {}),
      })
      .catch((err: unknown) => request.log.error({ err }, 'audit append failed'));
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
      await audit(request, {
        actor: username,
        action: 'auth.login',
        outcome: 'failure',
        details: { reason: 'throttled' },
      });
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
    const ok = await verifyPassword(password, user?.password_hash ?? (await dummyPasswordHash()));
    if (!user || !ok || user.disabled) {
      await ctx.throttle
        .failed(username, request.ip)
        .catch((err: unknown) => request.log.warn({ err }, 'login throttle unavailable'));
      await audit(request, { actor: username, action: 'auth.login', outcome: 'failure' });
      throw new UnauthorizedError(
        GATEWAY_ERRORS.invalidCredentials,
        'invalid username or password',
      );
    }
    await ctx.throttle.succeeded(username, request.ip).catch(() => undefined);
    const answer = await issue(user.username, user.roles, randomUUID());
    await audit(request, { actor: user.username, action: 'auth.login', outcome: 'success' });
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
      await audit(request, { actor: null, action: 'auth.refresh', outcome: 'failure' });
      throw new UnauthorizedError(GATEWAY_ERRORS.invalidRefresh, 'the refresh token is not valid');
    }
    const user = await ctx.store.users.get(row.username);
    if (!user || user.disabled) {
      await audit(request, { actor: row.username, action: 'auth.refresh', outcome: 'failure' });
      throw new UnauthorizedError(GATEWAY_ERRORS.invalidRefresh, 'the refresh token is not valid');
    }
    const answer = await issue(user.username, user.roles, row.family_id);
    await audit(request, { actor: user.username, action: 'auth.refresh', outcome: 'success' });
    return answer;
  }

  return async (app) => {
    await app.register(formbody, { bodyLimit: 64 * 1024 });
    const noStore = { 'cache-control': 'no-store', pragma: 'no-cache' };

    app.post('/auth/token', async (request, reply) => {
      const body = (request.body ?? {}) as Record<string, unknown>;
      reply.headers(noStore);
      if (body.grant_type === 'refresh_token') return refreshGrant(request, body);
      return passwordGrant(request, body);
    });

    app.post('/auth/refresh', async (request, reply) => {
      reply.headers(noStore);
      return refreshGrant(request, request.body ?? {});
    });

    app.get(
      '/auth/me',
      { preHandler: guard({ role: 'viewer', service: true }) },
      async (request) => {
        const p = request.principal!;
        return { username: p.username, roles: p.roles, kind: p.kind };
      },
    );
  };
}

import { randomUUID } from 'node:crypto';
import formbody from '@fastify/formbody';
import { parseWith } from '@trawl/contracts';
import type { Role } from '@trawl/platform';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { hashRefreshToken, newRefreshToken } from '../auth/tokens.ts';
import type { GatewayContext } from '../context.ts';
import {
  databaseDown,
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

interface TokenAnswer {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
  refresh_token: string;
}

/**
 * The refresh token also travels in this cookie (HttpOnly, Secure, SameSite=Strict, Path=/auth): the
 * web console keeps only the access token, in memory, and refreshes through the cookie. A client that
 * sends `X-Trawl-Refresh: cookie` gets the refresh token in the cookie only (not in the JSON), and
 * refreshes with the cookie by sending that header again (a header a cross-site form cannot send).
 */
const REFRESH_COOKIE = 'trawl_refresh';
const COOKIE_MODE_HEADER = 'x-trawl-refresh';
const COOKIE_VALUE = /^[A-Za-z0-9_-]{1,512}$/;

function refreshCookie(token: string, maxAgeSeconds: number): string {
  return `${REFRESH_COOKIE}=${token}; Max-Age=${maxAgeSeconds}; Path=/auth; HttpOnly; Secure; SameSite=Strict`;
}

/**
 * Beside the refresh cookie, one the console's script can see, holding nothing but `1`: that a
 * session cookie was set and when it ends. The console asks `/auth/refresh` at load only when it
 * is there, instead of asking on every load of a signed-out browser (issue 32).
 */
const SESSION_MARK = 'trawl_session';
function sessionMark(maxAgeSeconds: number): string {
  return `${SESSION_MARK}=${maxAgeSeconds > 0 ? '1' : ''}; Max-Age=${maxAgeSeconds}; Path=/; Secure; SameSite=Strict`;
}

/** The refresh token of the request's cookie, if it carries a well-formed one. */
function cookieToken(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  if (typeof header !== 'string') return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1 || part.slice(0, eq).trim() !== REFRESH_COOKIE) continue;
    const v = part.slice(eq + 1).trim();
    return COOKIE_VALUE.test(v) ? v : undefined;
  }
  return undefined;
}

function wantsCookie(request: FastifyRequest): boolean {
  return request.headers[COOKIE_MODE_HEADER] === 'cookie';
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
      throw databaseDown(err);
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

    const refreshTtlSeconds = Math.floor(refreshTtlMs / 1000);
    /** Sets the cookie; in cookie mode the JSON answer leaves the refresh token out. */
    function answer(request: FastifyRequest, reply: FastifyReply, a: TokenAnswer) {
      reply.header('set-cookie', [
        refreshCookie(a.refresh_token, refreshTtlSeconds),
        sessionMark(refreshTtlSeconds),
      ]);
      if (!wantsCookie(request)) return a;
      const { refresh_token: _kept, ...rest } = a;
      return rest;
    }
    /** The body's refresh token, else (cookie mode only) the cookie's. */
    function refreshBody(request: FastifyRequest): unknown {
      const body = (request.body ?? {}) as Record<string, unknown>;
      if (body.refresh_token !== undefined || !wantsCookie(request)) return body;
      const fromCookie = cookieToken(request);
      return fromCookie ? { ...body, refresh_token: fromCookie } : body;
    }

    app.post('/auth/token', pub, async (request, reply) => {
      const body = (request.body ?? {}) as Record<string, unknown>;
      reply.headers(noStore);
      if (body.grant_type === 'refresh_token')
        return answer(request, reply, await refreshGrant(request, refreshBody(request)));
      return answer(request, reply, await passwordGrant(request, body));
    });

    app.post('/auth/refresh', pub, async (request, reply) => {
      reply.headers(noStore);
      const body = refreshBody(request) as Record<string, unknown>;
      // the console with no session cookie: no session (401), not a malformed request
      if (wantsCookie(request) && body.refresh_token === undefined) {
        reply.header('set-cookie', sessionMark(0));
        throw new UnauthorizedError(GATEWAY_ERRORS.invalidRefresh, 'no session: sign in');
      }
      return answer(request, reply, await refreshGrant(request, body));
    });

    // Sign out: the refresh token (body or cookie) is used up, and the cookie cleared.
    app.post('/auth/logout', pub, async (request, reply) => {
      reply.headers(noStore);
      const body = (request.body ?? {}) as Record<string, unknown>;
      const token =
        typeof body.refresh_token === 'string' ? body.refresh_token : cookieToken(request);
      if (token && token.length <= 512) {
        const row = await ctx.store.refreshTokens
          .consume(hashRefreshToken(token), ctx.now())
          .catch(() => null);
        if (row) await audited(request, row.username, 'auth.logout');
      }
      reply.header('set-cookie', [refreshCookie('', 0), sessionMark(0)]);
      return reply.code(204).send();
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

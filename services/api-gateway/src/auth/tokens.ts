import { createHash, randomBytes } from 'node:crypto';
import { ROLES, type Role } from '@trawl/platform';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { GATEWAY_ERRORS, UnauthorizedError } from '../errors.ts';
import type { ServicePrincipal } from './service-principals.ts';

/**
 * Who is calling: a user (from a bearer token), or a service (`X-Internal-API-Key`: the platform
 * key, or a plugin's, retriever's or platform service's own credential; service-principals.ts).
 */
export type Principal =
  | {
      kind: 'user';
      username: string;
      roles: Role[];
      /** The user's auth_version when the token was issued (checked on every request). */
      version: number;
    }
  | ServicePrincipal;

type UserPrincipal = Principal & { kind: 'user' };

export interface TokenService {
  issueAccess(
    username: string,
    roles: Role[],
    version: number,
  ): Promise<{ token: string; expiresIn: number }>;
  /**
   * Verifies an access token's signature and claims; throws UnauthorizedError
   * (TRAWL_ERR_TOKEN_EXPIRED for expired ones). Whether the user still has this access is the
   * caller's check (AccessVersions).
   */
  verifyAccess(token: string): Promise<UserPrincipal>;
}

const ISSUER = 'trawl';
const AUDIENCE = 'trawl-api';
const invalid = () =>
  new UnauthorizedError(GATEWAY_ERRORS.invalidToken, 'the access token is not valid');

export function createTokenService(opts: {
  secretKey: string;
  accessTokenExpireMinutes: number;
  /** Seconds a verified token is remembered (0: always verify). */
  cacheSeconds?: number;
  cacheMaxEntries?: number;
  now?: () => number;
}): TokenService {
  const key = new TextEncoder().encode(opts.secretKey);
  const now = opts.now ?? Date.now;
  const ttlMs = (opts.cacheSeconds ?? 10) * 1000;
  const maxEntries = opts.cacheMaxEntries ?? 10_000;
  const verified = new Map<string, { p: UserPrincipal; until: number }>();
  const expiresIn = Math.round(opts.accessTokenExpireMinutes * 60);

  return {
    async issueAccess(username, roles, version) {
      const iat = Math.floor(now() / 1000);
      const token = await new SignJWT({ roles, typ: 'access', ver: version })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(username)
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setIssuedAt(iat)
        .setExpirationTime(iat + expiresIn)
        .setJti(randomBytes(9).toString('base64url'))
        .sign(key);
      return { token, expiresIn };
    },
    async verifyAccess(token) {
      const t = now();
      const hit = verified.get(token);
      if (hit && hit.until > t) return hit.p;
      if (hit) verified.delete(token);
      let payload: Record<string, unknown>;
      try {
        const r = await jwtVerify(token, key, {
          algorithms: ['HS256'],
          issuer: ISSUER,
          audience: AUDIENCE,
          currentDate: new Date(t),
          // A token without an expiry would be valid for ever: refused.
          requiredClaims: ['exp', 'iat', 'sub'],
        });
        payload = r.payload as Record<string, unknown>;
      } catch (err) {
        if (err instanceof joseErrors.JWTExpired) {
          throw new UnauthorizedError(GATEWAY_ERRORS.tokenExpired, 'the access token has expired');
        }
        throw invalid();
      }
      const roles = Array.isArray(payload.roles)
        ? payload.roles.filter((r): r is Role => (ROLES as readonly unknown[]).includes(r))
        : [];
      const ver = payload.ver;
      if (
        typeof payload.sub !== 'string' ||
        payload.typ !== 'access' ||
        typeof payload.exp !== 'number' ||
        typeof ver !== 'number' ||
        !Number.isSafeInteger(ver)
      ) {
        throw invalid();
      }
      const p: UserPrincipal = { kind: 'user', username: payload.sub, roles, version: ver };
      if (ttlMs > 0) {
        if (verified.size >= maxEntries) {
          const first = verified.keys().next();
          if (!first.done) verified.delete(first.value);
        }
        verified.set(token, { p, until: Math.min(t + ttlMs, payload.exp * 1000) });
      }
      return p;
    },
  };
}

/** A new opaque refresh token and the sha256 stored for it. */
export function newRefreshToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashRefreshToken(token) };
}

export function hashRefreshToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

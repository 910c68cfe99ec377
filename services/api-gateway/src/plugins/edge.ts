import { TrawlError } from '@trawl/contracts';
import type { Cache } from '@trawl/platform';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AccessVersions } from '../auth/access-versions.ts';
import { serviceAuthenticator } from '../auth/service-principals.ts';
import type { TokenService } from '../auth/tokens.ts';
import { GATEWAY_ERRORS, RateLimitedError, UnauthorizedError } from '../errors.ts';
import type { GatewayOptions } from '../options.ts';
import { sendNoRoute, sendProblem } from './problems.ts';

/** Paths that answer without credentials, host checks aside. */
function isOpenPath(url: string): boolean {
  return (
    url === '/health' ||
    url.startsWith('/health?') ||
    url === '/metrics' ||
    url.startsWith('/metrics?')
  );
}

/** Host header check against TRUSTED_HOSTS ('*' or an empty list: any; '*.example.com': subdomains). */
export function hostAllowed(hostname: string, trusted: readonly string[]): boolean {
  if (trusted.length === 0 || trusted.includes('*')) return true;
  const h = hostname.toLowerCase().replace(/\.$/, '');
  return trusted.some((t) => {
    const p = t.toLowerCase().trim();
    if (p.startsWith('*.')) return h.endsWith(p.slice(1)) && h.length > p.length - 1;
    return h === p;
  });
}

function stripPort(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  const i = host.lastIndexOf(':');
  return i >= 0 ? host.slice(0, i) : host;
}

/**
 * Hooks every request passes, in order, all `onRequest` (before any body is read): trusted host,
 * credentials (bearer token or internal key; failures are remembered, not thrown: public routes
 * ignore them, protected routes answer them with their own onRequest guard, see route-access.ts),
 * rate limit. A bearer token is accepted only while its user's access version is the one it carries
 * (access-versions.ts).
 */
export function registerEdgeHooks(
  app: FastifyInstance,
  opts: { config: GatewayOptions; tokens: TokenService; versions: AccessVersions; cache: Cache },
): void {
  const { config, tokens, versions, cache } = opts;
  const trusted = config.trustedHosts;
  const serviceOf = serviceAuthenticator(config.internalApiKey);
  const rl = config.rateLimit;
  const windowMs = rl.windowSeconds * 1000;

  app.decorateRequest('principal', null);
  app.decorateRequest('authError', null);

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    if (!isOpenPath(request.url) && !hostAllowed(stripPort(request.host ?? ''), trusted)) {
      return sendProblem(
        request,
        reply,
        400,
        GATEWAY_ERRORS.untrustedHost,
        'the Host header is not a trusted host',
      );
    }
    // No route: answered before the body is read (Fastify would parse it for the 404 handler).
    if (request.is404) return sendNoRoute(request, reply);
    await authenticate(request);
    if (rl.enabled && !isOpenPath(request.url) && request.principal?.kind !== 'service') {
      const subject = request.principal ? `u:${request.principal.username}` : `ip:${request.ip}`;
      let count: number;
      let resetMs: number;
      try {
        ({ count, resetMs } = await cache.hit(`rl:${subject}`, windowMs));
      } catch (err) {
        request.log.warn({ err }, 'rate-limit store unavailable; request let through');
        return;
      }
      const resetS = Math.max(0, Math.ceil(resetMs / 1000));
      reply.header('RateLimit-Limit', String(rl.max));
      reply.header('RateLimit-Remaining', String(Math.max(0, rl.max - count)));
      reply.header('RateLimit-Reset', String(resetS));
      reply.header('RateLimit-Policy', `${rl.max};w=${rl.windowSeconds}`);
      if (count > rl.max) throw new RateLimitedError(Math.max(1, resetS));
    }
  });

  async function authenticate(request: FastifyRequest): Promise<void> {
    const key = request.headers['x-internal-api-key'];
    if (typeof key === 'string' && key.length > 0) {
      const service = serviceOf(key);
      if (service) {
        request.principal = service;
      } else {
        request.authError = new UnauthorizedError(
          GATEWAY_ERRORS.invalidToken,
          'the internal API key (or service credential) is not valid',
        );
      }
      return;
    }
    const auth = request.headers.authorization;
    if (!auth) return;
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (!m?.[1]) {
      request.authError = new UnauthorizedError(
        GATEWAY_ERRORS.invalidToken,
        'expected Authorization: Bearer <token>',
      );
      return;
    }
    try {
      const p = await tokens.verifyAccess(m[1]);
      const current = await versions.current(p.username);
      if (current !== p.version) {
        request.authError = new UnauthorizedError(
          GATEWAY_ERRORS.tokenRevoked,
          'the access token was revoked (the account changed); sign in again',
        );
        return;
      }
      request.principal = p;
    } catch (err) {
      request.authError =
        err instanceof TrawlError
          ? err
          : new UnauthorizedError(GATEWAY_ERRORS.invalidToken, 'the access token is not valid');
    }
  }
}

import { TrawlError } from '@trawl/contracts';
import { ROLES } from '@trawl/platform';
import type { FastifyInstance, onRequestAsyncHookHandler, RouteOptions } from 'fastify';
import { GATEWAY_ERRORS } from '../errors.ts';
import { type Access, guard } from './access.ts';
import { SERVICE_SCOPES } from './service-principals.ts';

/** Who may call a route: anyone (`public`), or the users and services of an Access rule. */
type RouteAccess = 'public' | Access;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Required on every route of the gateway (route-access.ts refuses to start without it). */
    access?: RouteAccess;
  }
}

/** The route options that declare who may call a route: `app.get(url, allow({ role }), handler)`. */
export function allow(access: RouteAccess): { config: { access: RouteAccess } } {
  return { config: { access } };
}

function describe(route: RouteOptions): string {
  const m = Array.isArray(route.method) ? route.method.join(',') : route.method;
  return `${m} ${route.url}`;
}

function validAccess(a: unknown): a is RouteAccess {
  if (a === 'public') return true;
  if (a === null || typeof a !== 'object') return false;
  const { role, service, ...rest } = a as Access & Record<string, unknown>;
  if (Object.keys(rest).length > 0) return false;
  if (role !== undefined && !(ROLES as readonly unknown[]).includes(role)) return false;
  if (
    service !== undefined &&
    (!Array.isArray(service) ||
      service.length === 0 ||
      !service.every((s) => (SERVICE_SCOPES as readonly unknown[]).includes(s)))
  )
    return false;
  // a rule nobody meets is a mistake, not a rule
  return role !== undefined || service !== undefined;
}

/**
 * Route authorization, fail-closed: every route declares `config.access`; one that does not (or
 * declares something unknown) stops the gateway from starting. A protected route gets its guard as
 * an `onRequest` hook, which runs before the body is read: an unauthenticated or unauthorized
 * request is refused without parsing a byte of it. A public route (the token endpoints, health,
 * docs) gets a body limit of `publicBodyBytes` at most. Register before any route.
 */
export function enforceRouteAccess(app: FastifyInstance, opts: { publicBodyBytes: number }): void {
  app.addHook('onRoute', (route) => {
    const access = route.config?.access;
    if (!validAccess(access)) {
      throw new TrawlError(
        GATEWAY_ERRORS.routeWithoutAccess,
        `route ${describe(route)} declares no valid access rule (config.access: 'public' or ` +
          `{ role?: ${ROLES.join('|')}, service?: [${SERVICE_SCOPES.join('|')}, …] })`,
        { status: 500 },
      );
    }
    if (access === 'public') {
      route.bodyLimit = Math.min(route.bodyLimit ?? opts.publicBodyBytes, opts.publicBodyBytes);
      return;
    }
    const check = guard(access) as onRequestAsyncHookHandler;
    const own = route.onRequest;
    route.onRequest = own === undefined ? [check] : [check, ...(Array.isArray(own) ? own : [own])];
  });
}

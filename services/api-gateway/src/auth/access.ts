import type { TrawlError } from '@trawl/contracts';
import type { Role } from '@trawl/platform';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ForbiddenError, UnauthorizedError } from '../errors.ts';
import type { ServiceScope } from './service-principals.ts';
import type { Principal } from './tokens.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
    /** Why the credentials sent were refused (401, or 503 when they could not be checked). */
    authError: TrawlError | null;
  }
}

const RANK: Record<Role, number> = { viewer: 1, analyst: 2, admin: 3 };

/**
 * Who may call a route: users with at least `role`, and/or services holding one of the `service`
 * scopes (service-principals.ts: the platform key, a plugin's, a retriever's or a platform
 * service's own credential each hold a few).
 */
export interface Access {
  role?: Role;
  service?: readonly ServiceScope[];
}

function hasRole(p: Principal, role: Role): boolean {
  return p.kind === 'user' && p.roles.some((r) => RANK[r] >= RANK[role]);
}

/**
 * The onRequest hook enforcing `access` (added to each route by route-access.ts, so that it runs
 * before the body is read): 401 without valid credentials, 403 with too little privilege.
 */
export function guard(access: Access) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const p = request.principal;
    if (!p) throw request.authError ?? new UnauthorizedError();
    if (p.kind === 'service') {
      if (!access.service?.some((s) => p.scopes.has(s)))
        throw new ForbiddenError(`the credential of ${p.username} does not allow this action`);
      return;
    }
    if (!access.role) throw new ForbiddenError('only Trawl services may call this route');
    if (!hasRole(p, access.role))
      throw new ForbiddenError(`this action needs the ${access.role} role`);
  };
}

export function actorOf(request: FastifyRequest): string | null {
  return request.principal?.username ?? null;
}

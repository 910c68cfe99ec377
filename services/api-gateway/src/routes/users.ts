import { parseWith, TrawlError } from '@trawl/contracts';
import { ROLES, type Role, type User } from '@trawl/platform';
import type { FastifyPluginAsync, FastifyRequest, RouteShorthandOptions } from 'fastify';
import { z } from 'zod';
import { actorOf } from '../auth/access.ts';
import { PASSWORD_MAX_CHARS, passwordProblems } from '../auth/password-policy.ts';
import type { GatewayContext } from '../context.ts';
import { GATEWAY_ERRORS, NotFoundError, ValidationError } from '../errors.ts';

const Username = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.@-]*$/, { message: 'letters, digits and _ . @ - only' });
const Password = z
  .string()
  .max(PASSWORD_MAX_CHARS)
  .superRefine((pw, c) => {
    for (const message of passwordProblems(pw)) c.addIssue({ code: 'custom', message });
  });
const RoleList = z.array(z.enum(ROLES)).min(1).max(3);

const CreateUser = z
  .object({
    username: Username,
    password: Password,
    roles: RoleList.default(['viewer']),
  })
  .superRefine((u, c) => {
    if (passwordProblems(u.password).length > 0) return; // said above
    for (const message of passwordProblems(u.password, u.username)) {
      c.addIssue({ code: 'custom', path: ['password'], message });
    }
  });
const UpdateUser = z
  .object({
    password: Password.optional(),
    roles: RoleList.optional(),
    disabled: z.boolean().optional(),
  })
  .refine((u) => u.password !== undefined || u.roles !== undefined || u.disabled !== undefined, {
    message: 'give at least one of password, roles, disabled',
  });

export function userRoutes(ctx: GatewayContext): FastifyPluginAsync {
  const admin: RouteShorthandOptions = { config: { access: { role: 'admin' } } };

  function audit(
    request: FastifyRequest,
    action: string,
    target: string,
    outcome: 'success' | 'failure',
    details?: Record<string, unknown>,
  ) {
    return ctx.audit.record(request, {
      actor: actorOf(request),
      action,
      target,
      outcome,
      ...(details ? { details } : {}),
    });
  }

  async function activeAdmins(): Promise<User[]> {
    return (await ctx.store.users.list()).filter((u) => !u.disabled && u.roles.includes('admin'));
  }

  return async (app) => {
    app.get('/users', admin, async () => ({ items: await ctx.store.users.list() }));

    app.get('/users/:username', admin, async (request) => {
      const { username } = request.params as { username: string };
      const u = await ctx.store.users.get(username);
      if (!u) throw new NotFoundError(`user ${username}`);
      const { password_hash: _h, ...user } = u;
      return user;
    });

    app.post('/users', admin, async (request, reply) => {
      const parsed = parseWith(CreateUser, request.body ?? {});
      if (!parsed.ok) throw new ValidationError(parsed.problems);
      const { username, password, roles } = parsed.value;
      if (await ctx.store.users.get(username)) {
        await audit(request, 'user.create', username, 'failure', { reason: 'exists' });
        throw new TrawlError(GATEWAY_ERRORS.userExists, `user ${username} already exists`, {
          status: 409,
        });
      }
      const user = await ctx.store.users.create({
        username,
        password_hash: await ctx.passwords.hash(password),
        roles: roles as Role[],
      });
      await audit(request, 'user.create', username, 'success', { roles });
      reply.code(201);
      return user;
    });

    app.patch('/users/:username', admin, async (request) => {
      const { username } = request.params as { username: string };
      const parsed = parseWith(UpdateUser, request.body ?? {});
      if (!parsed.ok) throw new ValidationError(parsed.problems);
      const existing = await ctx.store.users.get(username);
      if (!existing) throw new NotFoundError(`user ${username}`);
      const { password, roles, disabled } = parsed.value;
      if (password !== undefined) {
        const weak = passwordProblems(password, username);
        if (weak.length > 0)
          throw new ValidationError(weak.map((message) => ({ path: '/password', message })));
      }
      const losesAdmin =
        existing.roles.includes('admin') &&
        ((roles && !roles.includes('admin')) || disabled === true);
      if (losesAdmin && (await activeAdmins()).length <= 1) {
        throw new TrawlError(
          GATEWAY_ERRORS.lastAdmin,
          'the last active admin cannot be demoted or disabled',
          { status: 409 },
        );
      }
      const user = await ctx.store.users.update(username, {
        ...(password ? { password_hash: await ctx.passwords.hash(password) } : {}),
        ...(roles ? { roles: roles as Role[] } : {}),
        ...(disabled !== undefined ? { disabled } : {}),
      });
      if (!user) throw new NotFoundError(`user ${username}`);
      // Their access tokens stop working now (every replica), not when they expire.
      await ctx.versions.changed(username, request.log);
      if (password || disabled) await ctx.store.refreshTokens.revokeUser(username);
      await audit(request, 'user.update', username, 'success', {
        ...(roles ? { roles } : {}),
        ...(disabled !== undefined ? { disabled } : {}),
        password_changed: password !== undefined,
      });
      return user;
    });

    app.delete('/users/:username', admin, async (request, reply) => {
      const { username } = request.params as { username: string };
      const existing = await ctx.store.users.get(username);
      if (!existing) throw new NotFoundError(`user ${username}`);
      if (
        existing.roles.includes('admin') &&
        !existing.disabled &&
        (await activeAdmins()).length <= 1
      ) {
        throw new TrawlError(GATEWAY_ERRORS.lastAdmin, 'the last active admin cannot be removed', {
          status: 409,
        });
      }
      await ctx.store.refreshTokens.revokeUser(username);
      await ctx.store.users.remove(username);
      await ctx.versions.changed(username, request.log);
      await audit(request, 'user.delete', username, 'success');
      reply.code(204);
    });
  };
}

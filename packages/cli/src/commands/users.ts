import { randomBytes } from 'node:crypto';
import type { Ctx } from '../context.ts';
import { usageError } from '../errors.ts';
import { EXIT } from '../exit-codes.ts';
import { printList, table } from '../table.ts';
import { readPassword } from './login.ts';

const ROLES = ['viewer', 'analyst', 'admin'];

export async function usersAdd(
  ctx: Ctx,
  o: { name: string; roles: string[]; passwordStdin: boolean },
): Promise<number> {
  if (o.roles.length === 0) throw usageError('--role is required (viewer, analyst or admin)');
  for (const r of o.roles)
    if (!ROLES.includes(r)) throw usageError(`unknown role ${r}: use ${ROLES.join(', ')}`);
  let password: string;
  let generated = false;
  if (o.passwordStdin || process.stdin.isTTY) {
    password = await readPassword(ctx, o.passwordStdin, `password for ${o.name}: `);
  } else {
    password = randomBytes(18).toString('base64url');
    generated = true;
  }
  const user = await ctx
    .api()
    .request<{ username: string; roles: string[] }>('POST', '/api/v1/users', {
      json: { username: o.name, password, roles: o.roles },
    });
  if (ctx.json) ctx.printJson(generated ? { ...user, password } : user);
  else {
    ctx.print(`created ${user.username} (${user.roles.join(', ')})`);
    if (generated) ctx.print(`password: ${password}   (shown once)`);
  }
  return EXIT.ok;
}

interface UserView {
  username: string;
  roles: string[];
  disabled: boolean;
  created_at: string;
}

/** The users table, with a header row. */
function formatUsers(items: readonly UserView[]): string {
  const rows = items.map((u) => [
    u.username,
    u.roles.join(','),
    u.disabled ? 'disabled' : 'active',
    u.created_at,
  ]);
  return table(['USER', 'ROLES', 'STATE', 'CREATED'], rows, [24, 22, 8]);
}

export async function usersList(ctx: Ctx): Promise<number> {
  return printList(ctx, '/api/v1/users', 'no users', formatUsers);
}

/**
 * Disables (or enables again) an account: PATCH /api/v1/users/<name> {disabled}. A disabled user
 * cannot log in and their tokens stop working; the account and its audit trail are kept.
 */
export async function usersSetDisabled(ctx: Ctx, name: string, disabled: boolean): Promise<number> {
  const u = await ctx
    .api()
    .request<UserView>('PATCH', `/api/v1/users/${encodeURIComponent(name)}`, {
      json: { disabled },
    });
  if (ctx.json) ctx.printJson(u);
  else ctx.print(`${u.username} is ${u.disabled ? 'disabled' : 'enabled'}`);
  return EXIT.ok;
}

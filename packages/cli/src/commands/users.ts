import { randomBytes } from 'node:crypto';
import type { Ctx } from '../context.ts';
import { usageError } from '../errors.ts';
import { EXIT } from '../exit-codes.ts';
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

export async function usersList(ctx: Ctx): Promise<number> {
  const r = await ctx.api().request<{
    items: { username: string; roles: string[]; disabled: boolean; created_at: string }[];
  }>('GET', '/api/v1/users');
  if (ctx.json) ctx.printJson(r);
  else
    for (const u of r.items)
      ctx.print(
        `${u.username.padEnd(24)} ${u.roles.join(',').padEnd(22)} ${u.disabled ? 'disabled' : 'active  '} ${u.created_at}`,
      );
  return EXIT.ok;
}

import type { Ctx } from '../context.ts';
import { usageError } from '../errors.ts';
import { EXIT } from '../exit-codes.ts';
import { printList, table } from '../table.ts';
import { readPassword } from './login.ts';

/**
 * `trawl passwd`: changes the password of the account logged in (issue 32). The current password,
 * then the new one, asked on the terminal or read as two lines of standard input
 * (`--password-stdin`). The server ends every session of the account; this command logs in again
 * with the new password, so the next command keeps working.
 */
export async function passwd(ctx: Ctx, o: { passwordStdin: boolean }): Promise<number> {
  let current: string;
  let next: string;
  if (o.passwordStdin) {
    const lines = (await ctx.io.readStdin()).toString('utf8').split(/\r?\n/);
    current = lines[0] ?? '';
    next = lines[1] ?? '';
    if (!current || !next)
      throw usageError(
        '--password-stdin: give the current password, then the new one, a line each',
      );
  } else {
    current = await readPassword(ctx, false, 'current password: ');
    next = await readPassword(ctx, false, 'new password: ');
    if ((await readPassword(ctx, false, 'new password again: ')) !== next)
      throw usageError('the two new passwords differ');
  }
  const api = ctx.api();
  const me = await api.request<{ username: string }>('GET', '/auth/me');
  await api.request('POST', '/api/v1/me/password', {
    json: { current_password: current, new_password: next },
  });
  await api.login(me.username, next);
  if (ctx.json) ctx.printJson({ username: me.username, changed: true });
  else ctx.print(`password of ${me.username} changed; logged in again`);
  return EXIT.ok;
}

interface ListEntryView {
  id: string;
  list: string;
  kind: string;
  value: string;
  note: string | null;
  created_by: string | null;
  expires_at: string | null;
  expired: boolean;
}

const LISTS = ['allow', 'block'];
const KINDS = ['sender', 'sender_domain', 'url_host', 'sha256'];

function formatEntries(items: readonly ListEntryView[]): string {
  const rows = items.map((e) => [
    e.id,
    e.list,
    e.kind,
    e.value,
    e.expires_at ? `${e.expires_at}${e.expired ? ' (expired)' : ''}` : 'never',
    e.created_by ?? '',
    e.note ?? '',
  ]);
  return table(
    ['ID', 'LIST', 'KIND', 'VALUE', 'EXPIRES', 'BY', 'NOTE'],
    rows,
    [36, 5, 13, 40, 24, 12],
  );
}

/** `trawl lists ls [--list L] [--kind K]`: the entries, newest first. */
export function listsList(ctx: Ctx, o: { list?: string | undefined; kind?: string | undefined }) {
  const q = new URLSearchParams();
  if (o.list) q.set('list', o.list);
  if (o.kind) q.set('kind', o.kind);
  return printList(ctx, `/api/v1/lists${q.size ? `?${q}` : ''}`, 'no list entries', formatEntries);
}

/** `trawl lists add allow|block <kind> <value> [--note N] [--expires T]` (admin). */
export async function listsAdd(
  ctx: Ctx,
  o: {
    list: string;
    kind: string;
    value: string;
    note?: string | undefined;
    expires?: string | undefined;
  },
): Promise<number> {
  if (!LISTS.includes(o.list)) throw usageError(`the list is allow or block, not ${o.list}`);
  if (!KINDS.includes(o.kind)) throw usageError(`the kind is one of ${KINDS.join(', ')}`);
  let expires: string | undefined;
  if (o.expires !== undefined) {
    const ms = Date.parse(o.expires);
    if (Number.isNaN(ms)) throw usageError('--expires: an ISO 8601 date or time, e.g. 2026-12-31');
    expires = new Date(ms).toISOString();
  }
  const e = await ctx.api().request<ListEntryView>('POST', '/api/v1/lists', {
    json: {
      list: o.list,
      kind: o.kind,
      value: o.value,
      ...(o.note ? { note: o.note } : {}),
      ...(expires ? { expires_at: expires } : {}),
    },
  });
  if (ctx.json) ctx.printJson(e);
  else ctx.print(`added ${e.kind} ${e.value} to the ${e.list} list (${e.id})`);
  return EXIT.ok;
}

/** `trawl lists rm <id>` (admin). */
export async function listsRemove(ctx: Ctx, id: string): Promise<number> {
  await ctx.api().request('DELETE', `/api/v1/lists/${encodeURIComponent(id)}`);
  if (ctx.json) ctx.printJson({ id, removed: true });
  else ctx.print(`removed ${id}`);
  return EXIT.ok;
}

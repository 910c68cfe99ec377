import { createInterface } from 'node:readline';
import type { Ctx } from '../context.ts';
import { CLI_ERRORS, CliError, usageError } from '../errors.ts';
import { EXIT } from '../exit-codes.ts';

async function prompt(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  try {
    return await new Promise<string>((resolve) => rl.question(question, resolve));
  } finally {
    rl.close();
  }
}

/** Reads a password from a TTY without echoing it. */
async function promptHidden(ctx: Ctx, question: string): Promise<string> {
  ctx.io.stderr.write(question);
  const stdin = process.stdin;
  stdin.setRawMode?.(true);
  stdin.resume();
  stdin.setEncoding('utf8');
  return new Promise<string>((resolve, reject) => {
    let value = '';
    const onData = (ch: string) => {
      for (const c of ch) {
        if (c === '\r' || c === '\n' || c === '\u0004') {
          stdin.setRawMode?.(false);
          stdin.pause();
          stdin.off('data', onData);
          ctx.io.stderr.write('\n');
          resolve(value);
          return;
        }
        if (c === '\u0003') {
          stdin.setRawMode?.(false);
          stdin.off('data', onData);
          reject(new CliError(CLI_ERRORS.input, 'cancelled', EXIT.error));
          return;
        }
        if (c === '\u007f') value = value.slice(0, -1);
        else value += c;
      }
    };
    stdin.on('data', onData);
  });
}

/** The password from stdin (--password-stdin, first line) or a hidden prompt on a terminal. */
export async function readPassword(
  ctx: Ctx,
  fromStdin: boolean,
  question: string,
): Promise<string> {
  if (fromStdin) {
    const text = (await ctx.io.readStdin()).toString('utf8');
    const line = text.split(/\r?\n/)[0] ?? '';
    if (line === '') throw usageError('--password-stdin: standard input held no password');
    return line;
  }
  if (!process.stdin.isTTY)
    throw usageError('no terminal to ask for the password: use --password-stdin');
  return promptHidden(ctx, question);
}

export async function login(
  ctx: Ctx,
  o: { user: string | undefined; passwordStdin: boolean },
): Promise<number> {
  let user = o.user;
  if (!user) {
    if (!process.stdin.isTTY || o.passwordStdin) throw usageError('--user is required');
    user = (await prompt('user: ')).trim();
  }
  const password = await readPassword(ctx, o.passwordStdin, `password for ${user}: `);
  const api = ctx.api();
  const s = await api.login(user, password);
  if (ctx.json) ctx.printJson({ url: api.url, username: s.username, expires_at: s.expires_at });
  else ctx.print(`logged in to ${api.url} as ${s.username}`);
  return EXIT.ok;
}

import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { z } from 'zod';

/** A signed-in session as the CLI stores it: server URL, user, tokens, expiry. */
export const Session = z.object({
  url: z.string(),
  username: z.string(),
  access_token: z.string(),
  refresh_token: z.string().optional(),
  /** Epoch ms when the access token expires. */
  expires_at: z.number().optional(),
});
export type Session = z.infer<typeof Session>;

export const CredentialsFile = z.object({
  /** The server of the last login: used when no --url / TRAWL_URL is given. */
  current: z.string().optional(),
  sessions: z.record(z.string(), Session).default({}),
});
export type CredentialsFile = z.infer<typeof CredentialsFile>;

/** `$XDG_CONFIG_HOME/trawl/credentials.json`, else `~/.config/trawl/credentials.json`. */
export function credentialsPath(env: Record<string, string | undefined>): string {
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'trawl', 'credentials.json');
}

/** Reads the CLI's credentials file; an absent or unreadable one is empty. */
export function readCredentials(path: string): CredentialsFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return { sessions: {} };
  }
  try {
    const r = CredentialsFile.safeParse(JSON.parse(text));
    return r.success ? r.data : { sessions: {} };
  } catch {
    return { sessions: {} };
  }
}

/** Writes the file with mode 0600 (its folder 0700), atomically. */
export function writeCredentials(path: string, data: CredentialsFile): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

export function normaliseUrl(url: string): string {
  return url.replace(/\/+$/, '');
}

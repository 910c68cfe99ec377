import { randomBytes } from 'node:crypto';
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { TrawlError } from '@trawl/contracts';
import { ALL_IN_ONE_ERRORS } from './errors.ts';

/** What the first start wrote into `.env` (only the values it generated). */
export interface FirstStartEnv {
  path: string;
  adminUser: string;
  /** Undefined when the process environment already supplied the admin password. */
  adminPassword: string | undefined;
}

/** 48 random bytes, base64url (64 characters). */
export function randomSecret(bytes = 48): string {
  return randomBytes(bytes).toString('base64url');
}

/** A password that is easy to copy: 20 characters of base64url without '-' and '_'. */
export function randomPassword(): string {
  let out = '';
  while (out.length < 20) out += randomBytes(24).toString('base64url').replace(/[-_]/g, '');
  return out.slice(0, 20);
}

/**
 * First start: writes `<rootDir>/.env` (mode 0600, never overwriting one that exists) with a random
 * SECRET_KEY, INTERNAL_API_KEY, an admin user and password, and APP_ENV=prod. Variables already set
 * in the process environment are not written (they take precedence anyway).
 * Answers undefined when a `.env` exists already.
 */
export function writeFirstStartEnv(
  rootDir: string,
  env: Record<string, string | undefined>,
): FirstStartEnv | undefined {
  const path = join(rootDir, '.env');
  // A secret given as a file (`NAME_FILE`) is set too: writing NAME beside it would conflict.
  const given = (k: string) => env[k] !== undefined && env[k] !== '';
  const set = (k: string) => given(k) || given(`${k}_FILE`);
  const adminUser = set('TRAWL_ADMIN_USER') ? (env.TRAWL_ADMIN_USER as string) : 'admin';
  const adminPassword = set('TRAWL_ADMIN_PASSWORD') ? undefined : randomPassword();
  const lines = [
    '# Written by `pnpm start` on first start. Keep it secret (mode 0600); see .env.example for',
    '# every variable. Delete this file and ./data to start over.',
  ];
  const put = (k: string, v: string) => {
    if (!set(k)) lines.push(`${k}=${v}`);
  };
  put('APP_ENV', 'prod');
  put('SECRET_KEY', randomSecret());
  put('INTERNAL_API_KEY', randomSecret());
  put('TRAWL_ADMIN_USER', adminUser);
  if (adminPassword !== undefined) lines.push(`TRAWL_ADMIN_PASSWORD=${adminPassword}`);
  let fd: number;
  try {
    // O_EXCL: never overwrite a .env that appeared meanwhile.
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw new TrawlError(ALL_IN_ONE_ERRORS.envFileWrite, `cannot write ${path}`, { cause: err });
  }
  try {
    writeSync(fd, `${lines.join('\n')}\n`);
  } finally {
    closeSync(fd);
  }
  return { path, adminUser, adminPassword };
}

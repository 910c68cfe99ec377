import { availableParallelism } from 'node:os';
import { DependencyDownError, GATEWAY_ERRORS } from '../errors.ts';
import { dummyPasswordHash, hashPassword, needsRehash, verifyPassword } from './passwords.ts';

/**
 * Password hashing with bounded cost. One scrypt at OWASP's parameters takes 128 MiB and a few
 * hundred ms of a core, and anyone may ask for one (POST /auth/token, for any username): so at
 * most `concurrency` run at once and at most `maxQueued` wait; further requests are refused at once
 * with 503 TRAWL_ERR_AUTH_BUSY and Retry-After, instead of growing memory and the queue of the
 * libuv threadpool that the rest of the process shares.
 */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /** Verifies against `stored`, or against a dummy hash when there is no user (same cost). */
  verify(password: string, stored: string | undefined): Promise<boolean>;
  needsRehash(stored: string): boolean;
}

export function createPasswordHasher(
  opts: { concurrency?: number; maxQueued?: number } = {},
): PasswordHasher {
  const concurrency = Math.max(
    1,
    opts.concurrency ?? Math.max(1, Math.floor(availableParallelism() / 2)),
  );
  const maxQueued = Math.max(0, opts.maxQueued ?? concurrency * 8);
  let running = 0;
  const waiting: (() => void)[] = [];

  async function limited<T>(fn: () => Promise<T>): Promise<T> {
    if (running >= concurrency) {
      if (waiting.length >= maxQueued) {
        const err = new DependencyDownError(
          GATEWAY_ERRORS.authBusy,
          'too many password checks in progress; retry shortly',
        );
        throw err;
      }
      await new Promise<void>((resolve) => waiting.push(resolve));
    } else {
      running++;
    }
    try {
      return await fn();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  }

  return {
    hash: (password) => limited(() => hashPassword(password)),
    async verify(password, stored) {
      const h = stored ?? (await dummyPasswordHash());
      return limited(() => verifyPassword(password, h));
    },
    needsRehash,
  };
}

import type { Cache } from '@trawl/platform';
import { z } from 'zod';

/**
 * What the mail orchestrator remembers of a message (key: messageKey()), in the shared cache:
 *  - pending:   a replica claimed it and is submitting it (at = claim time, ms);
 *  - submitted: the gateway accepted it as job `job`;
 *  - rejected:  the gateway refused it for good (unparseable, too large).
 * And of a job it submitted: which retriever and retriever id it came from (verdict callbacks).
 */
export const SeenState = z.discriminatedUnion('s', [
  z.object({ s: z.literal('pending'), at: z.number(), by: z.string() }),
  z.object({ s: z.literal('submitted'), job: z.string() }),
  z.object({ s: z.literal('rejected') }),
]);
export type SeenState = z.infer<typeof SeenState>;

export const JobOrigin = z.object({ retriever: z.string(), id: z.string() });
export type JobOrigin = z.infer<typeof JobOrigin>;

function parse<T>(schema: z.ZodType<T>, text: string | null): T | null {
  if (text === null) return null;
  try {
    const r = schema.safeParse(JSON.parse(text));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

export class DedupStore {
  constructor(
    private readonly cache: Cache,
    private readonly ttl: { doneSeconds: number; pendingSeconds: number },
  ) {}

  private seenKey(key: string): string {
    return `mail:seen:${key}`;
  }

  /** Claims a message for submission; false when some state already exists. */
  claim(key: string, at: number, by: string): Promise<boolean> {
    const v: SeenState = { s: 'pending', at, by };
    return this.cache.setIfAbsent(this.seenKey(key), JSON.stringify(v), this.ttl.pendingSeconds);
  }

  /** Renews a stale claim (after recovery found no job for it). */
  async reclaim(key: string, at: number, by: string): Promise<void> {
    const v: SeenState = { s: 'pending', at, by };
    await this.cache.set(this.seenKey(key), JSON.stringify(v), this.ttl.pendingSeconds);
  }

  async get(key: string): Promise<SeenState | null> {
    return parse(SeenState, await this.cache.get(this.seenKey(key)));
  }

  async markSubmitted(key: string, jobId: string, origin: JobOrigin): Promise<void> {
    // The origin first: once `submitted` is visible the message gets acked, and its verdict may come.
    await this.cache.set(`mail:job:${jobId}`, JSON.stringify(origin), this.ttl.doneSeconds);
    const v: SeenState = { s: 'submitted', job: jobId };
    await this.cache.set(this.seenKey(key), JSON.stringify(v), this.ttl.doneSeconds);
  }

  async markRejected(key: string): Promise<void> {
    const v: SeenState = { s: 'rejected' };
    await this.cache.set(this.seenKey(key), JSON.stringify(v), this.ttl.doneSeconds);
  }

  /** Releases a claim so that the next poll retries the message. */
  release(key: string): Promise<void> {
    return this.cache.del(this.seenKey(key));
  }

  /** One replica at a time recovers a stale claim. */
  lockRecovery(key: string, seconds: number): Promise<boolean> {
    return this.cache.setIfAbsent(`mail:recover:${key}`, '1', seconds);
  }

  unlockRecovery(key: string): Promise<void> {
    return this.cache.del(`mail:recover:${key}`);
  }

  async originOf(jobId: string): Promise<JobOrigin | null> {
    return parse(JobOrigin, await this.cache.get(`mail:job:${jobId}`));
  }
}

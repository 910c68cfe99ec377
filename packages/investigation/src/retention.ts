import { errorText } from '@trawl/contracts';
import {
  type Cache,
  createRetentionRepository,
  type RetentionRepository,
  type SqlClient,
} from '@trawl/platform';
import type { Logger } from 'pino';

/**
 * The retention purge (issue 15; docs/security.md "What is stored and for how long"), run by the
 * orchestrator's reaper: message bodies of finished jobs older than `mailDays` are replaced by a
 * stub (the job keeps its verdict, evidence and trace), finished jobs older than `jobDays` are
 * deleted with their search terms and cache entries, sender history rows not seen for
 * `senderHistoryDays` and refresh tokens expired for `refreshTokenDays` are deleted. 0 keeps for
 * ever. Bounded batches (RetentionRepository), under a database advisory lock: one replica purges
 * at a time, the others then find nothing left to do.
 */
export interface RetentionPolicy {
  mailDays: number;
  jobDays: number;
  senderHistoryDays: number;
  refreshTokenDays: number;
}

interface RetentionOptions {
  /** Minimum time between two runs started by tick() (default one hour). */
  intervalMs?: number;
  /** Rows per statement (default 500). */
  batchSize?: number;
}

/** What one run removed. */
interface RetentionReport {
  bodiesPurged: number;
  jobsDeleted: number;
  sendersDeleted: number;
  refreshTokensDeleted: number;
}

/** The retention purge: removes what is past its age (bodies, jobs, senders, refresh tokens). */
export interface Retention {
  /** Runs a purge now (waits for the lock); answers what it removed. */
  runOnce(): Promise<RetentionReport>;
  /** Starts a run in the background when none is running and the last one is intervalMs old. */
  tick(): void;
  /** Ends a run in progress after its current batch, and waits for it. */
  stop(): Promise<void>;
}

export interface RetentionDeps {
  repo: RetentionRepository;
  /** For the advisory lock that keeps replicas from purging together. */
  sql: Pick<SqlClient, 'withAdvisoryLock'>;
  /** The status cache whose `job:<id>` entries go with their jobs. */
  cache?: Cache | undefined;
  policy: RetentionPolicy;
  logger: Logger;
  clock?: () => Date;
  options?: RetentionOptions;
}

/** Advisory lock key of the retention purge ("trawl-rt"). */
const RETENTION_LOCK_KEY = 0x7472_7274;

const DAY_MS = 86_400_000;

/** Builds the retention purge over its repository and settings. */
export function createRetention(deps: RetentionDeps): Retention {
  const { repo, policy, logger } = deps;
  const clock = deps.clock ?? (() => new Date());
  const intervalMs = deps.options?.intervalMs ?? 3_600_000;
  const batch = Math.max(1, deps.options?.batchSize ?? 500);
  let running: Promise<RetentionReport> | undefined;
  let lastStart = Number.NEGATIVE_INFINITY;
  let stopped = false;

  const cutoff = (days: number): Date | null =>
    days > 0 ? new Date(clock().getTime() - days * DAY_MS) : null;

  /**
   * Calls `step` until it answers fewer than `full` (a short batch: nothing left; or stop);
   * answers the total.
   */
  async function drain(step: () => Promise<number>, full = batch): Promise<number> {
    let total = 0;
    while (!stopped) {
      const n = await step();
      total += n;
      if (n < full) break;
    }
    return total;
  }

  async function purge(): Promise<RetentionReport> {
    const report: RetentionReport = {
      bodiesPurged: 0,
      jobsDeleted: 0,
      sendersDeleted: 0,
      refreshTokensDeleted: 0,
    };
    const jobsBefore = cutoff(policy.jobDays);
    if (jobsBefore) {
      // jobs first: their bodies then need no purge
      report.jobsDeleted = await drain(async () => {
        const ids = await repo.deleteJobs(jobsBefore, batch);
        if (deps.cache && ids.length > 0) {
          const cache = deps.cache;
          await Promise.all(ids.map((id) => cache.del(`job:${id}`).catch(() => undefined)));
        }
        return ids.length;
      });
    }
    const mailBefore = cutoff(policy.mailDays);
    if (mailBefore) {
      // a batch of large messages may be cut short by its byte bound: go on until none is left
      report.bodiesPurged = await drain(() => repo.purgeBodies(mailBefore, batch), 1);
    }
    const sendersBefore = cutoff(policy.senderHistoryDays);
    if (sendersBefore) {
      let after: string | null = null;
      do {
        const r = await repo.pruneSenders(sendersBefore, after, batch);
        report.sendersDeleted += r.deleted;
        after = r.next;
      } while (after !== null && !stopped);
    }
    const tokensBefore = cutoff(policy.refreshTokenDays);
    if (tokensBefore) {
      report.refreshTokensDeleted = await drain(() => repo.pruneRefreshTokens(tokensBefore, batch));
    }
    return report;
  }

  function runOnce(): Promise<RetentionReport> {
    if (running) return running;
    lastStart = Date.now();
    const started = performance.now();
    running = deps.sql
      .withAdvisoryLock(RETENTION_LOCK_KEY, purge)
      .then((report) => {
        const removed =
          report.bodiesPurged +
          report.jobsDeleted +
          report.sendersDeleted +
          report.refreshTokensDeleted;
        if (removed > 0) {
          logger.info(
            { ...report, duration_ms: Math.round(performance.now() - started) },
            'retention purge done',
          );
        }
        return report;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  }

  const enabled =
    policy.mailDays > 0 ||
    policy.jobDays > 0 ||
    policy.senderHistoryDays > 0 ||
    policy.refreshTokenDays > 0;

  return {
    runOnce,
    tick() {
      if (!enabled || stopped || running || Date.now() - lastStart < intervalMs) return;
      runOnce().catch((e: unknown) =>
        logger.warn({ err: errorText(e) }, 'retention purge failed; retried at the next interval'),
      );
    },
    async stop() {
      stopped = true;
      await running?.catch(() => undefined);
    },
  };
}

/** The retention of a service's own PostgreSQL store (the orchestrator's and the embedded mode's). */
export function retentionOfStore(
  sql: SqlClient,
  cache: Cache | undefined,
  policy: RetentionPolicy,
  logger: Logger,
): Retention {
  return createRetention({ repo: createRetentionRepository(sql), sql, cache, policy, logger });
}

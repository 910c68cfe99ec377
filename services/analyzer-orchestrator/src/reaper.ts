import { errorText } from '@trawl/contracts';
import type { Retention } from '@trawl/investigation';
import type { Store } from '@trawl/platform';
import type { Logger } from 'pino';
import { ORCHESTRATOR_ERROR_CODES } from './errors.ts';
import type { Settlement } from './settlement.ts';

export interface ReaperDeps {
  store: Pick<Store, 'jobs'>;
  settlement: Pick<Settlement, 'failOutsideRun'>;
  log: Logger;
  clock: () => Date;
  /** How often it looks (0 = never: call reapOnce()). */
  intervalMs: number;
  /** Grace after a job's deadline before it is failed. */
  jobGraceMs: number;
  /** A job still `queued` this long is failed with TRAWL_ERR_NOT_DISPATCHED (0: never). */
  queuedMaxMs: number;
  /** The retention purge, ticked on each of the reaper's ticks; none: nothing purged. */
  retention?: Pick<Retention, 'tick' | 'stop'> | undefined;
}

/**
 * The reaper: fails the jobs stuck in `processing` past their deadline plus the grace (their
 * orchestrator died) and, when queuedMaxMs is set, the jobs whose request never reached the queue.
 * Its ticks also start the retention purge.
 */
export interface Reaper {
  /** One look; answers how many jobs it failed (0 while a look is already running). */
  reapOnce(): Promise<number>;
  /** Starts the ticks (none when intervalMs is 0). */
  start(): void;
  /** Stops the ticks and the retention purge; answers once the purge has stopped. */
  stop(): Promise<void> | undefined;
}

export function createReaper(deps: ReaperDeps): Reaper {
  const { store, settlement, log, clock, jobGraceMs, queuedMaxMs } = deps;
  let timer: ReturnType<typeof setInterval> | undefined;
  let reaping = false;

  async function reapOnce(): Promise<number> {
    if (reaping) return 0;
    reaping = true;
    let n = 0;
    try {
      const ids = await store.jobs.findStuck(clock(), jobGraceMs, 100);
      for (const id of ids) {
        const jlog = log.child({ job_id: id });
        const ok = await settlement.failOutsideRun(
          id,
          {
            code: ORCHESTRATOR_ERROR_CODES.deadline,
            message: `the job stayed processing past its workflow deadline plus ${jobGraceMs} ms`,
          },
          jlog,
        );
        if (ok) n++;
      }
      // A job whose row was stored but whose request message never reached the queue (the gateway
      // stopped between the two) would stay queued for ever: after queuedMaxMs it is failed.
      if (queuedMaxMs > 0) {
        for (const id of await store.jobs.findUndispatched(clock(), queuedMaxMs, 100)) {
          const jlog = log.child({ job_id: id });
          const ok = await settlement.failOutsideRun(
            id,
            {
              code: ORCHESTRATOR_ERROR_CODES.notDispatched,
              message: `the job stayed queued for more than ${queuedMaxMs} ms: its request never reached an orchestrator`,
            },
            jlog,
          );
          if (ok) n++;
        }
      }
    } finally {
      reaping = false;
    }
    return n;
  }

  return {
    reapOnce,
    start() {
      if (deps.intervalMs <= 0) return;
      timer = setInterval(() => {
        reapOnce().catch((e) => log.error({ err: errorText(e) }, 'reaper failed'));
        deps.retention?.tick();
      }, deps.intervalMs);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      return deps.retention?.stop();
    },
  };
}

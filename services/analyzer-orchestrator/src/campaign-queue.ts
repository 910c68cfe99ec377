import type { AnalysisResult, Email } from '@trawl/contracts';
import type { Store } from '@trawl/platform';
import type { Logger } from 'pino';
import { recordCampaign } from './campaigns.ts';
import { errText } from './errors.ts';

/** Jobs waiting to be grouped at most; past it a job is not grouped (logged). */
const CAMPAIGN_QUEUE_MAX = 5000;

export interface CampaignQueueDeps {
  store: Partial<Pick<Store, 'campaigns' | 'sql'>>;
  log: Logger;
}

/**
 * Campaigns (issue 16): a suspicious or reported job joins the campaign whose lure it shares.
 * Grouping a job costs a few statements under one lock: done on the job's path it halved the msgs/s
 * of a loaded orchestrator (docs/benchmarks.md). One background chain does it after the job is
 * settled, one job at a time (derived data, best effort); a full queue, or a crash, leaves a job
 * ungrouped (logged).
 */
export interface CampaignQueue {
  /** Queues a completed job for grouping; nothing without a campaigns store. */
  recordLater(
    jobId: string,
    email: Email,
    result: AnalysisResult,
    jlog: Logger,
    reported: boolean,
  ): void;
  /** Resolves once the jobs queued so far (and any queued meanwhile) are grouped. */
  settled(): Promise<void>;
  /** Waits for the queued jobs, at most `graceMs` (stop). */
  drain(graceMs: number): Promise<void>;
}

export function createCampaignQueue(deps: CampaignQueueDeps): CampaignQueue {
  const { store, log } = deps;
  const queue: (() => Promise<void>)[] = [];
  let chain: Promise<void> | undefined;

  function groupLater(task: () => Promise<void>): void {
    if (queue.length >= CAMPAIGN_QUEUE_MAX) {
      log.warn({ queued: queue.length }, 'campaign queue full: a job is not grouped');
      return;
    }
    queue.push(task);
    chain ??= (async () => {
      for (let t = queue.shift(); t; t = queue.shift()) {
        await t().catch((e) => log.warn({ err: errText(e) }, 'could not group a job'));
      }
      chain = undefined;
    })();
  }

  return {
    recordLater(jobId, email, result, jlog, reported) {
      if (!store.campaigns) return;
      const campaigns = store.campaigns;
      groupLater(() =>
        recordCampaign({ campaigns, sql: store.sql }, jobId, email, result, jlog, reported),
      );
    },
    async settled() {
      while (chain) await chain;
    },
    async drain(graceMs) {
      if (!chain) return;
      let t: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([chain, new Promise((r) => (t = setTimeout(r, graceMs)))]);
      clearTimeout(t);
    },
  };
}

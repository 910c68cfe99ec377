import type { AnalysisResult, Email } from '@trawl/contracts';
import { createCampaignGrouper } from '@trawl/investigation';
import type { Store } from '@trawl/platform';
import type { Logger } from 'pino';

/** Jobs waiting to be grouped at most; past it a job is not grouped (logged). */
const CAMPAIGN_QUEUE_MAX = 5000;
/** Jobs grouped by one call of the store (one or two statements, one lock when they match). */
const CAMPAIGN_BATCH_MAX = 64;

export interface CampaignQueueDeps {
  store: Partial<Pick<Store, 'campaigns' | 'sql'>>;
  log: Logger;
}

/**
 * Campaigns (issue 16): a suspicious or reported job joins the campaign whose lure it shares.
 * Grouping a job costs a few statements under one lock: done on the job's path it halved the msgs/s
 * of a loaded orchestrator (docs/benchmarks.md). One background chain does it after the job is
 * settled, the jobs finished meanwhile in one batch (campaigns.ts createCampaignGrouper; derived
 * data, best effort); a job that cannot join a campaign is left out before any SQL; a full queue,
 * or a crash, leaves a job ungrouped (logged).
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

/** The background campaign grouping of finished jobs (the queue described above). */
export function createCampaignQueue(deps: CampaignQueueDeps): CampaignQueue {
  const { store, log } = deps;
  const grouper = store.campaigns
    ? createCampaignGrouper({ campaigns: store.campaigns, sql: store.sql }, log, {
        maxQueued: CAMPAIGN_QUEUE_MAX,
        maxBatch: CAMPAIGN_BATCH_MAX,
      })
    : undefined;
  return {
    recordLater(jobId, email, result, jlog, reported) {
      grouper?.add(jobId, email, result, jlog, reported);
    },
    settled: async () => grouper?.settled(),
    drain: async (graceMs) => grouper?.drain(graceMs),
  };
}

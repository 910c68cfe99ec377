import { createAuditRepository } from './audit-repository.ts';
import { createCampaignRepository } from './campaign-repository.ts';
import { createClassifierRepository } from './classifier-repository.ts';
import { createConfigVersionRepository } from './config-version-repository.ts';
import { createFeedbackRepository } from './feedback-repository.ts';
import type { JobInsertBatchOptions } from './job-insert-batch.ts';
import { createJobRepository } from './job-repository.ts';
import { createListRepository } from './list-repository.ts';
import { createMessageRepository } from './message-repository.ts';
import { createQuarantineRepository } from './quarantine-repository.ts';
import { createRefreshTokenRepository } from './refresh-token-repository.ts';
import type { Store } from './repositories.ts';
import { createSenderHistoryRepository } from './sender-history-repository.ts';
import type { SqlClient } from './types.ts';
import { createUserRepository } from './user-repository.ts';
import { createWebhookRepository } from './webhook-repository.ts';

export interface StoreOptions {
  /** Group commit of job inserts (ADR 005); defaults: 64 rows, 8 MiB of Email text. */
  jobInsertBatch?: JobInsertBatchOptions;
}

/** Every repository over one SQL client (PostgreSQL or PGlite; migrated beforehand). */
export function createStore(sql: SqlClient, opts: StoreOptions = {}): Store {
  return {
    sql,
    jobs: createJobRepository(
      sql,
      opts.jobInsertBatch === undefined ? {} : { insertBatch: opts.jobInsertBatch },
    ),
    users: createUserRepository(sql),
    refreshTokens: createRefreshTokenRepository(sql),
    audit: createAuditRepository(sql),
    configVersions: createConfigVersionRepository(sql),
    senders: createSenderHistoryRepository(sql),
    classifier: createClassifierRepository(sql),
    messages: createMessageRepository(sql),
    campaigns: createCampaignRepository(sql),
    feedback: createFeedbackRepository(sql),
    webhooks: createWebhookRepository(sql),
    quarantine: createQuarantineRepository(sql),
    lists: createListRepository(sql),
  };
}

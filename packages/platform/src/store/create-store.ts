import { createAuditRepository } from './audit-repository.ts';
import { createConfigVersionRepository } from './config-version-repository.ts';
import { createJobRepository } from './job-repository.ts';
import { createRefreshTokenRepository } from './refresh-token-repository.ts';
import type { Store } from './repositories.ts';
import { createSenderHistoryRepository } from './sender-history-repository.ts';
import type { SqlClient } from './types.ts';
import { createUserRepository } from './user-repository.ts';

/** Every repository over one SQL client (PostgreSQL or PGlite; migrated beforehand). */
export function createStore(sql: SqlClient): Store {
  return {
    sql,
    jobs: createJobRepository(sql),
    users: createUserRepository(sql),
    refreshTokens: createRefreshTokenRepository(sql),
    audit: createAuditRepository(sql),
    configVersions: createConfigVersionRepository(sql),
    senders: createSenderHistoryRepository(sql),
  };
}

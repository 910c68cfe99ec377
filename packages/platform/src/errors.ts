import { BadInputError, TransientError, TrawlError } from '@trawl/contracts';

/** Error codes of @trawl/platform (listed in docs/errors.md). */
export const PLATFORM_ERRORS = {
  brokerUnavailable: 'TRAWL_ERR_BROKER_UNAVAILABLE',
  brokerNotFound: 'TRAWL_ERR_BROKER_NOT_FOUND',
  brokerBadMessage: 'TRAWL_ERR_BROKER_BAD_MESSAGE',
  storeUnavailable: 'TRAWL_ERR_STORE_UNAVAILABLE',
  storeMigration: 'TRAWL_ERR_STORE_MIGRATION',
  storeBadCursor: 'TRAWL_ERR_STORE_BAD_CURSOR',
  storeConflict: 'TRAWL_ERR_STORE_CONFLICT',
  cacheUnavailable: 'TRAWL_ERR_CACHE_UNAVAILABLE',
} as const;

export function brokerUnavailable(message: string, cause?: unknown): TransientError {
  return new TransientError(PLATFORM_ERRORS.brokerUnavailable, message, { cause });
}

export function brokerNotFound(message: string, cause?: unknown): TrawlError {
  return new TrawlError(PLATFORM_ERRORS.brokerNotFound, message, { status: 500, cause });
}

export function storeUnavailable(message: string, cause?: unknown): TransientError {
  return new TransientError(PLATFORM_ERRORS.storeUnavailable, message, { cause });
}

export function migrationFailed(message: string, cause?: unknown): TrawlError {
  return new TrawlError(PLATFORM_ERRORS.storeMigration, message, { status: 500, cause });
}

export function badCursor(): BadInputError {
  return new BadInputError(PLATFORM_ERRORS.storeBadCursor, 'The cursor is not valid.', {
    status: 400,
    problems: [{ path: '/cursor', message: 'not a cursor this service issued' }],
  });
}

export function storeConflict(message: string): BadInputError {
  return new BadInputError(PLATFORM_ERRORS.storeConflict, message, { status: 409 });
}

export function cacheUnavailable(message: string, cause?: unknown): TransientError {
  return new TransientError(PLATFORM_ERRORS.cacheUnavailable, message, { cause });
}

import type { ValidationProblem } from '@trawl/contracts';
import { BadInputError, ERROR_CODES, TransientError, TrawlError } from '@trawl/contracts';

/** Error codes of the API gateway (docs/errors.md). Shared codes come from @trawl/contracts. */
export const GATEWAY_ERRORS = {
  ...ERROR_CODES,
  invalidCredentials: 'TRAWL_ERR_AUTH_INVALID_CREDENTIALS',
  invalidToken: 'TRAWL_ERR_AUTH_INVALID_TOKEN',
  invalidRefresh: 'TRAWL_ERR_AUTH_INVALID_REFRESH_TOKEN',
  tokenRevoked: 'TRAWL_ERR_AUTH_TOKEN_REVOKED',
  authBusy: 'TRAWL_ERR_AUTH_BUSY',
  loginThrottled: 'TRAWL_ERR_AUTH_LOGIN_THROTTLED',
  unsupportedGrant: 'TRAWL_ERR_AUTH_UNSUPPORTED_GRANT',
  unsupportedMediaType: 'TRAWL_ERR_GATEWAY_UNSUPPORTED_MEDIA_TYPE',
  badRequest: 'TRAWL_ERR_GATEWAY_BAD_REQUEST',
  badQuery: 'TRAWL_ERR_GATEWAY_BAD_QUERY',
  /** A request field (query, path, body) holding U+0000 or an unpaired surrogate (issue 28). */
  unstorableText: 'TRAWL_ERR_GATEWAY_UNSTORABLE_TEXT',
  routeWithoutAccess: 'TRAWL_ERR_GATEWAY_ROUTE_WITHOUT_ACCESS',
  notOwner: 'TRAWL_ERR_AUTH_NOT_OWNER',
  notRetriever: 'TRAWL_ERR_AUTH_NOT_RETRIEVER',
  userExists: 'TRAWL_ERR_USER_EXISTS',
  lastAdmin: 'TRAWL_ERR_USER_LAST_ADMIN',
  brokerUnavailable: 'TRAWL_ERR_BROKER_UNAVAILABLE',
  databaseUnavailable: 'TRAWL_ERR_DATABASE_UNAVAILABLE',
  reloadFailed: 'TRAWL_ERR_CONFIG_RELOAD_FAILED',
  jobNotCompleted: 'TRAWL_ERR_FEEDBACK_JOB_NOT_COMPLETED',
  /** One user's feedback requests past TRAWL_FEEDBACK_RATE_PER_HOUR (issue 28): 429. */
  feedbackRateLimited: 'TRAWL_ERR_FEEDBACK_RATE_LIMITED',
  messagePurged: 'TRAWL_ERR_MESSAGE_PURGED',
  /** A quarantined message released already (or being released): a release delivers it once. */
  quarantineReleased: 'TRAWL_ERR_QUARANTINE_RELEASED',
  /** The filter holding it could not deliver a released message (it stays held; try again). */
  quarantineDelivery: 'TRAWL_ERR_QUARANTINE_DELIVERY',
  /** An allow or block list already holds MAX_LIST_ENTRIES entries (issue 32). */
  listFull: 'TRAWL_ERR_LIST_FULL',
  /** A change of one's own password gave a wrong current password (issue 32). */
  wrongPassword: 'TRAWL_ERR_AUTH_WRONG_PASSWORD',
  /** Every CPU worker busy and its queue full (a large message to parse or render): retry. */
  busy: 'TRAWL_ERR_GATEWAY_BUSY',
} as const;

export class UnauthorizedError extends TrawlError {
  constructor(code: string = GATEWAY_ERRORS.unauthorized, message = 'authentication required') {
    super(code, message, { status: 401 });
  }
}

export class ForbiddenError extends TrawlError {
  constructor(
    message = 'your role does not allow this action',
    code: string = GATEWAY_ERRORS.forbidden,
  ) {
    super(code, message, { status: 403 });
  }
}

export class NotFoundError extends BadInputError {
  constructor(what: string) {
    super(GATEWAY_ERRORS.notFound, `${what} not found`, { status: 404 });
  }
}

export class ValidationError extends BadInputError {
  constructor(problems: ValidationProblem[], message = 'the request is not valid') {
    super(GATEWAY_ERRORS.validation, message, { status: 422, problems });
  }
}

/** An unknown or malformed query parameter (a list's filters): 400, each problem naming it. */
export class BadQueryError extends BadInputError {
  constructor(problems: ValidationProblem[]) {
    const names = [...new Set(problems.map((p) => p.path.replace(/^\/query\/?/, '') || '?'))];
    super(GATEWAY_ERRORS.badQuery, `invalid query parameter: ${names.join(', ')}`, {
      status: 400,
      problems,
    });
  }
}

export class RateLimitedError extends TrawlError {
  readonly retryAfterSeconds: number;
  constructor(
    retryAfterSeconds: number,
    code: string = GATEWAY_ERRORS.rateLimited,
    message = 'too many requests',
  ) {
    super(code, message, { status: 429 });
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export class DependencyDownError extends TransientError {
  constructor(code: string, message: string, cause?: unknown) {
    super(code, message, { retryAfterSeconds: 5, cause });
  }
}

/** The database did not answer (a query or a connection failed): 503, retry later. */
export function databaseDown(cause: unknown): DependencyDownError {
  return new DependencyDownError(
    GATEWAY_ERRORS.databaseUnavailable,
    'the database is unavailable; retry later',
    cause,
  );
}

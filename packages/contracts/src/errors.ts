import { z } from 'zod';
import type { ValidationProblem } from './problems.ts';

/**
 * Base of every error Trawl raises on purpose. Subclasses say the intent:
 *  - BadInputError: the caller's fault (4xx), never retried;
 *  - TransientError: a dependency is down or slow (503 / retried);
 *  - everything else is a bug: logged with its stack, answered as 500 without details.
 * `code` is stable and documented in docs/errors.md (`TRAWL_ERR_<AREA>_<WHAT>`).
 */
export class TrawlError extends Error {
  readonly code: string;
  readonly status: number;
  readonly retryable: boolean;
  readonly problems: ValidationProblem[] | undefined;
  constructor(
    code: string,
    message: string,
    opts: {
      status?: number;
      retryable?: boolean;
      problems?: ValidationProblem[];
      cause?: unknown;
    } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    this.code = code;
    this.status = opts.status ?? 500;
    this.retryable = opts.retryable ?? false;
    this.problems = opts.problems;
  }
}

/** Bad input: a 4xx answer, never retried. */
export class BadInputError extends TrawlError {
  constructor(
    code: string,
    message: string,
    opts: { status?: number; problems?: ValidationProblem[]; cause?: unknown } = {},
  ) {
    super(code, message, { ...opts, status: opts.status ?? 400, retryable: false });
  }
}

/** A transient failure: retried (a 503 with Retry-After at the API). */
export class TransientError extends TrawlError {
  readonly retryAfterSeconds: number;
  constructor(
    code: string,
    message: string,
    opts: { retryAfterSeconds?: number; cause?: unknown } = {},
  ) {
    super(code, message, { status: 503, retryable: true, cause: opts.cause });
    this.retryAfterSeconds = opts.retryAfterSeconds ?? 5;
  }
}

/** Codes shared across packages. Packages add their own next to their code. */
export const ERROR_CODES = {
  validation: 'TRAWL_ERR_VALIDATION',
  notFound: 'TRAWL_ERR_NOT_FOUND',
  unauthorized: 'TRAWL_ERR_UNAUTHORIZED',
  tokenExpired: 'TRAWL_ERR_TOKEN_EXPIRED',
  forbidden: 'TRAWL_ERR_FORBIDDEN',
  rateLimited: 'TRAWL_ERR_RATE_LIMITED',
  payloadTooLarge: 'TRAWL_ERR_PAYLOAD_TOO_LARGE',
  dependencyDown: 'TRAWL_ERR_DEPENDENCY_UNAVAILABLE',
  deadline: 'TRAWL_ERR_DEADLINE',
  internal: 'TRAWL_ERR_INTERNAL',
  configInvalid: 'TRAWL_ERR_CONFIG_INVALID',
  /** The gateway's Host check; its clients (the mail orchestrator) tell it from a bad message. */
  untrustedHost: 'TRAWL_ERR_GATEWAY_UNTRUSTED_HOST',
} as const;

/** Codes of reading a peer's answer (`readBounded`, `fetchBounded` of peer-answer.ts, issue 28). */
export const PEER_ERROR_CODES = {
  /** The peer's answer is larger than the caller accepts; the rest was not read. */
  tooLarge: 'TRAWL_ERR_PEER_ANSWER_TOO_LARGE',
  /** The peer did not finish its answer (headers and body) by the deadline. */
  timeout: 'TRAWL_ERR_PEER_TIMEOUT',
} as const;

/** RFC 9457 problem details, as every error answer carries them. */
export const ProblemDetails = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  instance: z.string(),
  code: z.string(),
  request_id: z.string(),
  errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
});
export type ProblemDetails = z.infer<typeof ProblemDetails>;

/**
 * What a skipped analyzer's trace says when it is off: disabled in service.yaml, or enabled with
 * nothing to work with (the llm analyzer without an `llm_host`). Such a call is skipped, never
 * failed, and a stage whose analyzers are all off is skipped for this reason (issue 32).
 */
export const NOT_CONFIGURED = 'not configured';

/**
 * Whether an error says that the analyzer or provider called is not configured: its stable code
 * ends in `_NOT_CONFIGURED` (`TRAWL_ERR_PLUGIN_NOT_CONFIGURED`, `TRAWL_ERR_LLM_NOT_CONFIGURED`, or
 * a third-party plugin's own code of that form, answered as a problem). Read by code, not by class:
 * the error may come from another thread.
 */
export function isNotConfigured(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.endsWith('_NOT_CONFIGURED');
}

/**
 * The one way to put a thrown value into a log line, a trace or a message (issue 30): an Error's
 * message (its name when the message is empty), a string as it is, a number or boolean as written;
 * anything else (an object, undefined) is `unknown error`, never its `toString()` (which an object
 * from elsewhere may not have, or may make throw).
 */
export function errorText(e: unknown): string {
  if (e instanceof Error) return e.message || e.name;
  if (typeof e === 'string') return e;
  if (typeof e === 'number' || typeof e === 'boolean' || typeof e === 'bigint') return String(e);
  return 'unknown error';
}

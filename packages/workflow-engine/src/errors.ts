import { ERROR_CODES } from '@trawl/contracts';

/** Stable error codes of the workflow engine (listed in docs/errors.md). */
export const WORKFLOW_ERROR_CODES = {
  /** The workflow definition is invalid (bad references, cycles, CEL that does not compile, ...). */
  invalid: 'TRAWL_ERR_WORKFLOW_INVALID',
  /** A stage failed, which fails the job. */
  stageFailed: 'TRAWL_ERR_STAGE_FAILED',
  /** The workflow's `timeout_ms` elapsed before the run ended. */
  deadline: ERROR_CODES.deadline,
  /** The caller aborted the run through `RunOptions.signal`. */
  cancelled: 'TRAWL_ERR_WORKFLOW_CANCELLED',
  /** No stage produced a result: the final stage and all its ancestors were skipped. */
  noResult: 'TRAWL_ERR_WORKFLOW_NO_RESULT',
  /** An unexpected error inside the engine (a bug). */
  internal: ERROR_CODES.internal,
} as const;

import { ERROR_CODES } from '@trawl/contracts';

/** Error codes of the analyzer orchestrator (listed in docs/errors.md). */
export const ORCHESTRATOR_ERROR_CODES = {
  /** The job stayed `processing` past its workflow deadline plus the grace period (reaper). */
  deadline: ERROR_CODES.deadline,
  /**
   * The job stayed `queued` longer than TRAWL_JOB_QUEUED_MAX_MS: its request message was never
   * published or was lost (reaper).
   */
  notDispatched: 'TRAWL_ERR_NOT_DISPATCHED',
  /** The request message was delivered too many times (it kept failing) and was dead-lettered. */
  deliveryLimit: 'TRAWL_ERR_DELIVERY_LIMIT',
  /** The request message did not match AnalysisRequestMessage. */
  invalidMessage: 'TRAWL_ERR_ORCH_INVALID_MESSAGE',
  /** The job row's stored Email (claim check, ADR 005) is not JSON or not a valid Email. */
  invalidStoredEmail: 'TRAWL_ERR_ORCH_INVALID_STORED_EMAIL',
  /** The job names a workflow the running configuration does not hold. */
  unknownWorkflow: 'TRAWL_ERR_ORCH_UNKNOWN_WORKFLOW',
  /** An unexpected error while running a job (a bug); details are in the log. */
  internal: ERROR_CODES.internal,
} as const;

/** Error codes of the embedded mode (listed in docs/errors.md). */
export const ALL_IN_ONE_ERRORS = {
  /** The first-start `.env` could not be written. */
  envFileWrite: 'TRAWL_ERR_EMBEDDED_ENV_WRITE',
  /** A component failed to start. */
  startFailed: 'TRAWL_ERR_EMBEDDED_START',
} as const;

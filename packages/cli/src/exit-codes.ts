/** Exit codes of the `trawl` command (documented in docs/cli.md). */
export const EXIT = {
  ok: 0,
  /** Anything that went wrong: server error, network, a failed job, a timeout. */
  error: 1,
  /** Bad command line (unknown command or option, missing argument). */
  usage: 2,
  /** Not logged in, the token or refresh token is no longer valid, or the role is insufficient. */
  auth: 3,
  /** `analyze --wait`: the job completed and the verdict is phishing. */
  phishing: 10,
} as const;
/** One of the CLI's exit codes (EXIT). */
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

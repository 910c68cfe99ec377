import { TrawlError } from '@trawl/contracts';
import { EXIT, type ExitCode } from './exit-codes.ts';

/** Error codes of the `trawl` command (listed in docs/errors.md). */
export const CLI_ERRORS = {
  usage: 'TRAWL_ERR_CLI_USAGE',
  notLoggedIn: 'TRAWL_ERR_CLI_NOT_LOGGED_IN',
  auth: 'TRAWL_ERR_CLI_AUTH',
  unreachable: 'TRAWL_ERR_CLI_UNREACHABLE',
  server: 'TRAWL_ERR_CLI_SERVER',
  input: 'TRAWL_ERR_CLI_INPUT',
  timeout: 'TRAWL_ERR_CLI_TIMEOUT',
  jobFailed: 'TRAWL_ERR_CLI_JOB_FAILED',
  auditBroken: 'TRAWL_ERR_CLI_AUDIT_BROKEN',
} as const;

/** An error that ends the command with a message and an exit code. */
export class CliError extends TrawlError {
  readonly exitCode: ExitCode;
  /** The problem details the server answered, when it did. */
  readonly problem: Record<string, unknown> | undefined;
  constructor(
    code: string,
    message: string,
    exitCode: ExitCode = EXIT.error,
    opts: { cause?: unknown; problem?: Record<string, unknown> | undefined } = {},
  ) {
    super(code, message, opts.cause === undefined ? {} : { cause: opts.cause });
    this.exitCode = exitCode;
    this.problem = opts.problem;
  }
}

export function usageError(message: string): CliError {
  return new CliError(CLI_ERRORS.usage, message, EXIT.usage);
}

import { BadInputError, ERROR_CODES } from '@trawl/contracts';

/** Stable error codes of @trawl/config (listed in docs/errors.md). */
export const CONFIG_ERROR_CODES = {
  invalid: ERROR_CODES.configInvalid,
} as const;

/**
 * One problem found in the configuration. Environment problems name the `variable`; file problems
 * name the `file`, a JSON `path` (RFC 6901) inside it and, when known, the `line` and `column`.
 */
export interface ConfigProblem {
  /** The variable at fault (environment problems). */
  variable?: string;
  /** The file at fault (service.yaml / workflows.yaml problems). */
  file?: string;
  /** JSON pointer inside the file; for a variable, `/<VARIABLE>`. */
  path: string;
  message: string;
  line?: number;
  column?: number;
}

/** Formats a problem as one line: `VAR: message` or `file:line:col /path: message`. */
export function formatProblem(p: ConfigProblem): string {
  if (p.variable !== undefined) return `${p.variable}: ${p.message}`;
  let where = p.file ?? '';
  if (p.line !== undefined) where += `:${p.line}${p.column !== undefined ? `:${p.column}` : ''}`;
  const path = p.path === '' ? '' : ` ${p.path}`;
  return `${where}${path}: ${p.message}`.trimStart();
}

/**
 * Invalid configuration (TRAWL_ERR_CONFIG_INVALID). The message lists every problem, one per line;
 * `problems` holds them structured. Messages never carry a secret's value.
 */
export class ConfigError extends BadInputError {
  override readonly problems: ConfigProblem[];
  constructor(problems: ConfigProblem[], title = 'invalid configuration') {
    super(
      CONFIG_ERROR_CODES.invalid,
      [`${title} (${problems.length} problem${problems.length === 1 ? '' : 's'}):`]
        .concat(problems.map((p) => `  - ${formatProblem(p)}`))
        .join('\n'),
      { status: 400, problems },
    );
    this.problems = problems;
  }
}

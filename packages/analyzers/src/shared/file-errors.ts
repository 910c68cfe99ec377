import { BadInputError } from '@trawl/contracts';

/** Error codes of the files an operator maintains for the analyzers (listed in docs/errors.md). */
const FILE_ERROR_CODES = {
  rules: 'TRAWL_ERR_RULES_FILE_INVALID',
  scorerWeights: 'TRAWL_ERR_SCORER_WEIGHTS_INVALID',
} as const;

/**
 * One of those files cannot be used: bad input (400), never retried; the analyzer keeps the last
 * good version in force. Each area's subclass says which file.
 */
export abstract class OperatorFileError extends BadInputError {
  constructor(file: keyof typeof FILE_ERROR_CODES, message: string, cause?: unknown) {
    super(FILE_ERROR_CODES[file], message, { status: 400, cause });
  }
}

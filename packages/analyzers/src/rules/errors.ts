import { BadInputError } from '@trawl/contracts';

/** Error codes of the rules analyzer (listed in docs/errors.md). */
const RULES_ERROR_CODES = {
  fileInvalid: 'TRAWL_ERR_RULES_FILE_INVALID',
} as const;

/** The rule file cannot be read, is not valid YAML, does not match the schema, or a rule does not compile. */
export class RuleFileInvalidError extends BadInputError {
  constructor(message: string, cause?: unknown) {
    super(RULES_ERROR_CODES.fileInvalid, message, { status: 400, cause });
  }
}

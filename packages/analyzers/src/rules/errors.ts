import { OperatorFileError } from '../shared/file-errors.ts';

/** The rule file cannot be read, is not valid YAML, does not match the schema, or a rule does not compile. */
export class RuleFileInvalidError extends OperatorFileError {
  constructor(message: string, cause?: unknown) {
    super('rules', message, cause);
  }
}

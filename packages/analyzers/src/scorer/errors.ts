import { OperatorFileError } from '../shared/file-errors.ts';

/** The weights file cannot be read, is not valid YAML or does not match the schema. */
export class ScorerWeightsInvalidError extends OperatorFileError {
  constructor(message: string, cause?: unknown) {
    super('scorerWeights', message, cause);
  }
}

import { BadInputError } from '@trawl/contracts';

/** Error codes of the scorer analyzer (to be listed in docs/errors.md). */
const SCORER_ERROR_CODES = {
  weightsInvalid: 'TRAWL_ERR_SCORER_WEIGHTS_INVALID',
} as const;

/** The weights file cannot be read, is not valid YAML or does not match the schema. */
export class ScorerWeightsInvalidError extends BadInputError {
  constructor(message: string, cause?: unknown) {
    super(SCORER_ERROR_CODES.weightsInvalid, message, { status: 400, cause });
  }
}

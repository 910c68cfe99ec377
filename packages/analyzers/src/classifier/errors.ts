import { BadInputError, TransientError } from '@trawl/contracts';

/** Error codes of the learnt classifier (listed in docs/errors.md). */
const CLASSIFIER_ERROR_CODES = {
  /** The store holding the learnt state cannot be read or written. */
  unavailable: 'TRAWL_ERR_CLASSIFIER_UNAVAILABLE',
  /** An exported state file is not one (`trawl learn --import`). */
  badState: 'TRAWL_ERR_CLASSIFIER_BAD_STATE',
  /** The state was learnt with another tokeniser than this version's. */
  tokenizerMismatch: 'TRAWL_ERR_CLASSIFIER_TOKENIZER_MISMATCH',
  /** A training path is neither a folder of messages, an mbox nor a maildir. */
  badSource: 'TRAWL_ERR_CLASSIFIER_BAD_SOURCE',
} as const;

export function classifierUnavailable(cause: unknown): TransientError {
  return new TransientError(
    CLASSIFIER_ERROR_CODES.unavailable,
    'the learnt classifier state cannot be read',
    { cause },
  );
}

export function badState(message: string): BadInputError {
  return new BadInputError(CLASSIFIER_ERROR_CODES.badState, message, { status: 400 });
}

export function tokenizerMismatch(have: string, want: string): BadInputError {
  return new BadInputError(
    CLASSIFIER_ERROR_CODES.tokenizerMismatch,
    `the state was learnt with tokeniser ${have}, this version uses ${want}: learn again`,
    { status: 400 },
  );
}

export function badSource(message: string): BadInputError {
  return new BadInputError(CLASSIFIER_ERROR_CODES.badSource, message, { status: 400 });
}

import { TrawlError } from '@trawl/contracts';

/** Error codes of the directory provider (listed in docs/errors.md). */
const DIRECTORY_ERROR_CODES = {
  /** directory_file cannot be read or parsed, and no earlier version was loaded. */
  fileInvalid: 'TRAWL_ERR_DIRECTORY_FILE_INVALID',
} as const;

export class DirectoryFileError extends TrawlError {
  constructor(path: string, detail: string) {
    super(DIRECTORY_ERROR_CODES.fileInvalid, `directory_file ${path}: ${detail}`, {
      status: 500,
      retryable: false,
    });
  }
}

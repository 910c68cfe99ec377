import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { corpusDir, findRepoRoot } from '@trawl/config';

/**
 * Real components some tests need (Dovecot, Postfix, Chromium, the shared corpora beside the
 * repository). On a developer's laptop a missing one skips those tests; in CI (`CI=true`, set by
 * scripts/ci.sh) it fails the test file, naming the component and how to get it, so that a skip
 * never hides a broken CI image behind ", 7 skipped".
 */
export class MissingComponentError extends Error {
  constructor(what: string, howToGet: string) {
    super(`${what} is required in CI but is missing here: ${howToGet}`);
    this.name = 'MissingComponentError';
  }
}

/** True when the run is CI's (the only place this module reads the environment). */
function inCI(): boolean {
  return process.env.CI === 'true';
}

/**
 * `present` as is when the component is there; else false on a laptop (the caller skips) and a
 * thrown MissingComponentError in CI. Use it where the file is collected:
 * `describe.skipIf(!requireComponent('Dovecot', dovecotAvailable(), 'apt-get install dovecot-imapd'))`.
 */
export function requireComponent(what: string, present: boolean, howToGet: string): boolean {
  if (present) return true;
  if (inCI()) throw new MissingComponentError(what, howToGet);
  return false;
}

const CORPUS_HINT =
  'the detection corpora are read in place from <repo>/../shared (docs/development.md)';

/** `<repo>/../shared/corpus`, or null on a laptop without it (an error in CI). */
export function sharedCorpus(): string | null {
  const dir = corpusDir(findRepoRoot());
  requireComponent('the shared corpus (../shared/corpus)', dir !== null, CORPUS_HINT);
  return dir;
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Every source `pnpm eval` reads: `../shared/corpus` and each folder of `../shared/corpora/`, or
 * null on a laptop where either is absent (an error in CI).
 */
export function sharedCorpora(): string[] | null {
  const corpus = corpusDir(findRepoRoot());
  const corporaDir = resolve(findRepoRoot(), '..', 'shared', 'corpora');
  const folders = isDir(corporaDir)
    ? readdirSync(corporaDir)
        .sort()
        .map((name) => join(corporaDir, name))
        .filter(isDir)
    : [];
  const present = corpus !== null && folders.length > 0;
  requireComponent(
    'the shared corpora (../shared/corpus and ../shared/corpora/*)',
    present,
    CORPUS_HINT,
  );
  return present ? [corpus, ...folders] : null;
}

/** Dovecot's IMAP server for the retriever and mail-ingestion tests. */
export const DOVECOT_HINT =
  'scripts/ci.sh installs the Debian package dovecot-imapd (tests run as root)';

import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { restorePgliteDataDir } from '@trawl/platform';

/**
 * Restores a backup of `trawl backup` into `<dataDir>/pglite`. The current database, when there is
 * one, is kept beside it as `pglite.before-restore-<time>` (only with `force`: without it a
 * non-empty database is refused). Trawl must be stopped: PGlite has one process per data folder.
 */
export async function restoreBackup(o: {
  dataDir: string;
  backupFile: string;
  force: boolean;
  now?: () => Date;
}): Promise<{ restored: string; previous?: string }> {
  const target = join(o.dataDir, 'pglite');
  const bytes = readFileSync(o.backupFile);
  let previous: string | undefined;
  if (existsSync(target) && readdirSync(target).length > 0) {
    if (!o.force) {
      throw new Error(
        `${target} holds a database: stop Trawl, then run again with --force (the current one is kept beside it)`,
      );
    }
    previous = `${target}.before-restore-${(o.now?.() ?? new Date()).toISOString().replace(/[:.]/g, '-')}`;
    renameSync(target, previous);
  }
  mkdirSync(target, { recursive: true, mode: 0o700 });
  await restorePgliteDataDir(target, new Blob([bytes]));
  return previous === undefined ? { restored: target } : { restored: target, previous };
}

import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SqlClient } from '@trawl/platform';

/**
 * An online backup of the embedded database: PGlite's data directory copied consistently while
 * Trawl keeps running (SqlClient.dumpDataDir), written as `trawl-<time>.tar.gz` (mode 0600) in
 * `dir`. Written to a temporary name first, so a file with the final name is always complete.
 */
export async function writeBackup(
  sql: SqlClient,
  dir: string,
  now: () => Date = () => new Date(),
): Promise<{ file: string; bytes: number; created_at: string }> {
  if (!sql.dumpDataDir) throw new Error('this database has no online backup: use pg_dump');
  const at = now();
  const blob = await sql.dumpDataDir();
  const bytes = new Uint8Array(await blob.arrayBuffer());
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `trawl-${at.toISOString().replace(/[:.]/g, '-')}.tar.gz`);
  writeFileSync(`${file}.part`, bytes, { mode: 0o600 });
  renameSync(`${file}.part`, file);
  return { file, bytes: bytes.length, created_at: at.toISOString() };
}

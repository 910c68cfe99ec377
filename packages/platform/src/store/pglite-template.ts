import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { loadMigrations, type Migration, migrate } from './migrate.ts';
import { createPgliteClient, openPglite } from './pglite-client.ts';
import type { SqlClient } from './types.ts';

/**
 * A fresh PGlite runs initdb, which takes tens of seconds on a busy machine; loading a dumped data
 * directory takes a few. So a migrated data directory is built once, dumped to a template file in
 * the temp folder (keyed by the PGlite version and the migrations' content) and every in-memory
 * database starts from a copy of it.
 */
const inProcess = new Map<string, Promise<Blob>>();

function pgliteVersion(): string {
  try {
    const req = createRequire(import.meta.url);
    let dir = dirname(req.resolve('@electric-sql/pglite'));
    for (let i = 0; i < 4; i++) {
      try {
        const pkg = req(join(dir, 'package.json')) as { name?: string; version?: string };
        if (pkg.name === '@electric-sql/pglite') return pkg.version ?? 'unknown';
      } catch {
        // not here
      }
      dir = dirname(dir);
    }
  } catch {
    // fall through
  }
  return 'unknown';
}

function templateKey(migrations: Migration[]): string {
  const h = createHash('sha256').update(`pglite ${pgliteVersion()}\n`);
  for (const m of migrations) h.update(`${m.id}\n${m.sql}\n`);
  return h.digest('hex').slice(0, 16);
}

async function buildTemplate(migrations: Migration[]): Promise<Blob> {
  const { db, sql } = await openPglite();
  try {
    await migrate(sql, { migrations });
    const dump = await db.dumpDataDir('none');
    return new Blob([await dump.arrayBuffer()]);
  } finally {
    await sql.close();
  }
}

async function template(migrations: Migration[], cacheDir: string): Promise<Blob> {
  const key = templateKey(migrations);
  let p = inProcess.get(key);
  if (!p) {
    p = (async () => {
      const file = join(cacheDir, `trawl-pglite-${key}.tar`);
      try {
        return new Blob([await readFile(file)]);
      } catch {
        // not built yet
      }
      const blob = await buildTemplate(migrations);
      try {
        await mkdir(cacheDir, { recursive: true });
        const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
        await writeFile(tmp, Buffer.from(await blob.arrayBuffer()));
        await rename(tmp, file);
      } catch {
        // a read-only temp folder only costs speed
      }
      return blob;
    })();
    inProcess.set(key, p);
    p.catch(() => inProcess.delete(key));
  }
  return p;
}

/**
 * An in-memory PGlite with every migration applied (or none with `migrated: false`), started from a
 * cached template.
 */
export async function createMigratedPglite(
  opts: { cacheDir?: string; migrated?: boolean } = {},
): Promise<SqlClient> {
  const migrations = opts.migrated === false ? [] : await loadMigrations();
  const blob = await template(migrations, opts.cacheDir ?? tmpdir());
  const sql = await createPgliteClient({ loadDataDir: blob });
  if (migrations.length > 0) await migrate(sql, { migrations });
  return sql;
}

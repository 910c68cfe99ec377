import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorText } from '@trawl/contracts';
import { migrationFailed } from '../errors.ts';
import type { SqlClient } from './types.ts';

/** Advisory lock key of migrations ("trawl-mg"): replicas that start together migrate one at a time. */
export const MIGRATION_LOCK_KEY = 0x7472_6d67;

/** The folder of the store's SQL migrations. */
export const MIGRATIONS_DIR = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'migrations',
);

/** One SQL migration: its id (the file's name) and text. */
export interface Migration {
  id: string;
  sql: string;
}

/** The migrations of `dir`, in order. */
export async function loadMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{3}-[a-z0-9-]+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (f) => ({
      id: f.replace(/\.sql$/, ''),
      sql: await readFile(join(dir, f), 'utf8'),
    })),
  );
}

/**
 * Applies the migrations not applied yet, in order, each in its own transaction, recorded in
 * `trawl_migrations`, under an advisory lock. Answers the ids applied by this call.
 */
export async function migrate(
  sql: SqlClient,
  opts: { migrations?: Migration[] } = {},
): Promise<string[]> {
  const migrations = opts.migrations ?? (await loadMigrations());
  return sql.withAdvisoryLock(MIGRATION_LOCK_KEY, async () => {
    await sql.exec(
      `CREATE TABLE IF NOT EXISTS trawl_migrations (
         id text PRIMARY KEY,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const done = new Set(
      (await sql.query<{ id: string }>('SELECT id FROM trawl_migrations')).rows.map((r) => r.id),
    );
    const applied: string[] = [];
    for (const m of migrations) {
      if (done.has(m.id)) continue;
      try {
        await sql.transaction(async (tx) => {
          await tx.exec(m.sql);
          await tx.query('INSERT INTO trawl_migrations (id) VALUES ($1)', [m.id]);
        });
      } catch (err) {
        throw migrationFailed(`migration ${m.id} failed: ${errorText(err)}`, err);
      }
      applied.push(m.id);
    }
    return applied;
  });
}

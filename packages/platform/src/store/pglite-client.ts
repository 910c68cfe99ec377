import { PGlite, type Transaction } from '@electric-sql/pglite';
import { KeyedMutex } from './keyed-mutex.ts';
import { pglitePrepared } from './pglite-prepared.ts';
import { storableParams } from './storable-text.ts';
import type { SqlClient, SqlResult } from './types.ts';

type Target = Pick<PGlite, 'query' | 'exec'> | Transaction;

type Prepared = ReturnType<typeof pglitePrepared>;

function makeQuery(target: Target, prepared: Prepared, inTransaction: boolean) {
  return async <R>(sql: string, params?: unknown[], name?: string): Promise<SqlResult<R>> => {
    // the one boundary of text the store cannot hold (ADR 014), as on PostgreSQL
    const values = storableParams(params);
    // a named statement is prepared once (pglite-prepared.ts), as pg does on PostgreSQL
    const r =
      name === undefined
        ? await target.query<R>(sql, values)
        : await prepared(name, sql, values ?? [], inTransaction);
    return {
      rows: r.rows as R[],
      rowCount: r.rowCount ?? r.affectedRows ?? r.rows.length,
    };
  };
}

function txClient(tx: Transaction, locks: KeyedMutex, prepared: Prepared): SqlClient {
  const query = makeQuery(tx, prepared, true);
  let depth = 0;
  const self: SqlClient = {
    kind: 'pglite',
    query,
    async exec(sql) {
      await tx.exec(sql);
    },
    async transaction(fn) {
      const name = `trawl_nested_${++depth}`;
      await tx.query(`SAVEPOINT ${name}`);
      try {
        const out = await fn(self);
        await tx.query(`RELEASE SAVEPOINT ${name}`);
        return out;
      } catch (err) {
        await tx.query(`ROLLBACK TO SAVEPOINT ${name}`);
        throw err;
      } finally {
        depth--;
      }
    },
    withAdvisoryLock: (key, fn) => locks.run(key, fn),
    async ping() {
      return 0;
    },
    async close() {},
  };
  return self;
}

/**
 * PGlite (PostgreSQL in WebAssembly) for the embedded mode and unit tests: in memory unless
 * `dataDir` is given. PGlite has one connection, so transactions are serialised (PGlite queues
 * other queries while one runs) and advisory locks are an in-process mutex (only this process
 * opens the data directory).
 */
export async function createPgliteClient(
  opts: { dataDir?: string; loadDataDir?: Blob } = {},
): Promise<SqlClient> {
  return (await openPglite(opts)).sql;
}

/** The PGlite instance and its SqlClient (for dumping a template). */
export async function openPglite(
  opts: { dataDir?: string; loadDataDir?: Blob } = {},
): Promise<{ db: PGlite; sql: SqlClient }> {
  const db = await PGlite.create({
    ...(opts.dataDir === undefined ? {} : { dataDir: opts.dataDir }),
    ...(opts.loadDataDir === undefined ? {} : { loadDataDir: opts.loadDataDir }),
  });
  const locks = new KeyedMutex();
  const prepared = pglitePrepared(db);
  const query = makeQuery(db, prepared, false);
  const sql: SqlClient = {
    kind: 'pglite',
    query,
    async exec(sql) {
      await db.exec(sql);
    },
    transaction: (fn) => db.transaction((tx) => fn(txClient(tx, locks, prepared))),
    withAdvisoryLock: (key, fn) => locks.run(key, fn),
    async ping() {
      const t = performance.now();
      await db.query('SELECT 1');
      return performance.now() - t;
    },
    async close() {
      if (!db.closed) await db.close();
    },
    async dumpDataDir() {
      // Held against other transactions: none interleaves while the files are copied. A CHECKPOINT
      // first writes the committed pages out, so the copy needs little WAL replay when restored;
      // PGlite's own dump runs with every query held off, so the files do not change under it.
      return db.transaction(async (tx) => {
        await tx.exec('CHECKPOINT');
        return await db.dumpDataDir('gzip');
      });
    },
  };
  return { db, sql };
}

/**
 * Restores a backup made by `dumpDataDir` into `dataDir`, which must be empty or absent: opens
 * PGlite on it with the backup loaded, checks it answers, and closes it. Trawl must be stopped.
 */
export async function restorePgliteDataDir(dataDir: string, backup: Blob): Promise<void> {
  const db = await PGlite.create({ dataDir, loadDataDir: backup });
  try {
    await db.query('SELECT 1');
  } finally {
    await db.close();
  }
}

/**
 * The store adapter: PostgreSQL (pg) and PGlite behind one SQL client; the repositories are written
 * once on top of it. Migrations are SQL files in packages/platform/migrations, applied in order.
 */
export interface SqlResult<R> {
  rows: R[];
  rowCount: number;
}

export interface SqlClient {
  readonly kind: 'postgres' | 'pglite';
  /**
   * `name` makes it a named prepared statement: parsed once per connection (PostgreSQL) or once
   * (PGlite's one connection) and then only bound and executed (the same name must always carry
   * the same text).
   */
  query<R = Record<string, unknown>>(
    sql: string,
    params?: unknown[],
    name?: string,
  ): Promise<SqlResult<R>>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
  /** Runs fn in one transaction on one connection; rolls back when it throws. */
  transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T>;
  /** Runs fn holding a session advisory lock (serialises across every replica). */
  withAdvisoryLock<T>(key: number, fn: () => Promise<T>): Promise<T>;
  ping(): Promise<number>;
  close(): Promise<void>;
  /**
   * PGlite only: a consistent copy of the whole data directory (a gzipped tarball) taken while the
   * database keeps serving (an online backup of the embedded mode); restore it with
   * restorePgliteDataDir. PostgreSQL has pg_dump / pg_basebackup instead.
   */
  dumpDataDir?(): Promise<Blob>;
}

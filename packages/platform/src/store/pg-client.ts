import pg from 'pg';
import { storeUnavailable } from '../errors.ts';
import { storableParams } from './storable-text.ts';
import type { SqlClient, SqlResult } from './types.ts';

/** SQLSTATE classes that mean the server is unreachable or going away, not that the query is wrong. */
function isConnectionError(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string')
    return err instanceof Error && /connect|terminat|timeout/i.test(err.message);
  return (
    /^(08|57P|53)/.test(code) || ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE'].includes(code)
  );
}

function wrap(err: unknown): unknown {
  return isConnectionError(err) ? storeUnavailable('database is unavailable', err) : err;
}

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

type Queryable = Pick<pg.PoolClient, 'query'>;

function makeQuery(target: Queryable) {
  return async <R>(sql: string, input?: unknown[], name?: string): Promise<SqlResult<R>> => {
    // the one boundary of text the store cannot hold (ADR 014)
    const params = storableParams(input);
    try {
      const r =
        name === undefined
          ? await target.query(sql, params as unknown[] | undefined)
          : await target.query({
              name,
              text: sql,
              values: params as unknown[] | undefined,
            } as pg.QueryConfig);
      return { rows: r.rows as R[], rowCount: r.rowCount ?? 0 };
    } catch (err) {
      throw wrap(err);
    }
  };
}

function txClient(client: pg.PoolClient): SqlClient {
  const query = makeQuery(client);
  const self: SqlClient = {
    kind: 'postgres',
    query,
    async exec(sql) {
      await query(sql);
    },
    transaction: async (fn) => {
      // nested: a savepoint
      await query('SAVEPOINT trawl_nested');
      try {
        const out = await fn(self);
        await query('RELEASE SAVEPOINT trawl_nested');
        return out;
      } catch (err) {
        await query('ROLLBACK TO SAVEPOINT trawl_nested');
        throw err;
      }
    },
    withAdvisoryLock: async (key, fn) => {
      await query('SELECT pg_advisory_xact_lock($1)', [key]);
      return fn();
    },
    ping: async () => {
      const t = performance.now();
      await query('SELECT 1');
      return performance.now() - t;
    },
    close: async () => {},
  };
  return self;
}

/**
 * Runs `fn` on a client of its own and releases it afterwards (destroyed when `fn` called
 * `broke()`: its session is in an unknown state); errors come out wrapped, as every query's do.
 */
async function onClient<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient, broke: () => void) => Promise<T>,
): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await checkout(pool);
  } catch (err) {
    throw wrap(err);
  }
  let broken = false;
  try {
    return await fn(client, () => {
      broken = true;
    });
  } catch (err) {
    throw wrap(err);
  } finally {
    release(client, broken);
  }
}

/** Whether a connection URL sets its own startup `options` (then they are left as they are). */
function urlHasOptions(url: string): boolean {
  try {
    return new URL(url).searchParams.has('options');
  } catch {
    return false;
  }
}

/**
 * PostgreSQL client over a pg Pool. With `schema`, every connection's search_path is that schema
 * (tests use one schema each). Every connection runs with JIT compilation off (`jit=off`), unless
 * the URL gives its own `options`: Trawl's statements are short, and a plan costed above
 * `jit_above_cost` (a batch of campaign keys, a search over many jobs) spent up to 100 times its
 * run compiling (0.4 s against 5 ms, bench:campaigns --batch 64).
 */
export function createPgClient(opts: {
  url: string;
  schema?: string;
  max?: number;
  applicationName?: string;
}): SqlClient {
  const startup = [
    ...(urlHasOptions(opts.url) ? [] : ['-c jit=off']),
    ...(opts.schema === undefined ? [] : [`-c search_path=${quoteIdent(opts.schema)}`]),
  ];
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.max ?? 10,
    application_name: opts.applicationName ?? 'trawl',
    connectionTimeoutMillis: 5000,
    ...(startup.length > 0 ? { options: startup.join(' ') } : {}),
  });
  // An idle client that loses its connection emits 'error' on the pool; without a listener it would
  // crash the process. The next query gets a new connection.
  pool.on('error', () => {});
  const query = makeQuery(pool);
  return {
    kind: 'postgres',
    query,
    async exec(sql) {
      await query(sql);
    },
    transaction(fn) {
      return onClient(pool, async (client, broke) => {
        try {
          await client.query('BEGIN');
          const out = await fn(txClient(client));
          await client.query('COMMIT');
          return out;
        } catch (err) {
          try {
            await client.query('ROLLBACK');
          } catch {
            broke();
          }
          throw err;
        }
      });
    },
    withAdvisoryLock(key, fn) {
      return onClient(pool, async (client, broke) => {
        await client.query('SELECT pg_advisory_lock($1)', [key]);
        try {
          return await fn();
        } finally {
          try {
            await client.query('SELECT pg_advisory_unlock($1)', [key]);
          } catch {
            broke(); // a dropped session releases its locks with it
          }
        }
      });
    },
    async ping() {
      const t = performance.now();
      await query('SELECT 1');
      return performance.now() - t;
    },
    async close() {
      await pool.end();
    },
  };
}

/**
 * A checked-out client whose session dies (server restart, pg_terminate_backend) emits 'error' on
 * itself, not on the pool: without a listener that would crash the process. The listener marks the
 * client broken; the query in flight rejects on its own and the caller sees that error.
 */
const onCheckedOutError = (): void => {};

async function checkout(pool: pg.Pool): Promise<pg.PoolClient> {
  const client = await pool.connect();
  client.on('error', onCheckedOutError);
  return client;
}

function release(client: pg.PoolClient, broken: boolean): void {
  client.removeListener('error', onCheckedOutError);
  client.release(broken);
}

import { PLATFORM_ERRORS } from '../errors.ts';

/**
 * Group commit of per-job statements (ADR 007): calls made in the same event-loop turn are written
 * by one statement. The statement of a batch answers by key; the statement of one call stands alone.
 */
export interface StatementBatchSpec<I, O> {
  /** Calls per statement (1 turns grouping off). */
  maxRows: number;
  /** The row's key (the job id, lower case). A second call with a key already in the batch waits for the next statement. */
  key(item: I): string;
  /**
   * Keep a repeated key in the same batch instead (default false). For statements the database
   * refuses on a repeated key (an INSERT of a primary key): the whole statement fails and its rows
   * run one by one in arrival order, so the first caller wins.
   */
  keepRepeatedKeys?: boolean;
  /** One statement for every item; answers the outcome of each key it changed. */
  many(items: I[]): Promise<Map<string, O>>;
  /**
   * The statement of one item alone (a batch of one, and the row-by-row fallback); by default
   * `many` of that item.
   */
  one?(item: I): Promise<O>;
  /** What an item answers when `many` did not return its key (not changed: finished or unknown). */
  absent?: O;
  /** Instead of `absent`: the answer (or the error thrown) for an item `many` did not return. */
  onAbsent?(item: I): O;
  /**
   * The size of an item (e.g. the bytes it writes) and the most a statement may hold: a batch is
   * flushed before an item would take it past `maxWeight`; an item larger than that goes alone.
   */
  weight?(item: I): number;
  maxWeight?: number;
}

interface Pending<I, O> {
  item: I;
  resolve(v: O): void;
  reject(err: unknown): void;
}

/** A connection-level failure (pg-client wraps those): a batch is not retried row by row. */
export function isUnavailable(err: unknown): boolean {
  return (err as { code?: unknown }).code === PLATFORM_ERRORS.storeUnavailable;
}

/**
 * Collects calls made in the same event-loop turn and runs them as one statement, flushed on
 * setImmediate (or at once when the batch reaches `maxRows`). Each caller gets its own promise.
 * When the statement fails for a reason other than the connection, nothing of it was stored (one
 * statement is atomic) and its items run again one by one, in arrival order, so that one bad row
 * fails only its own caller; a connection failure fails every caller of the batch.
 */
export function createStatementBatcher<I, O>(
  spec: StatementBatchSpec<I, O>,
): (item: I) => Promise<O> {
  const maxRows = Math.max(1, Math.trunc(spec.maxRows));
  const maxWeight = spec.maxWeight ?? Number.POSITIVE_INFINITY;
  let batch: Pending<I, O>[] = [];
  let keys = new Set<string>();
  let weight = 0;
  let scheduled = false;
  const answer = (out: Map<string, O>, item: I): O => {
    const o = out.get(spec.key(item));
    if (o !== undefined) return o;
    return spec.onAbsent ? spec.onAbsent(item) : (spec.absent as O);
  };
  const one = spec.one ?? (async (item: I) => answer(await spec.many([item]), item));

  async function runOne(p: Pending<I, O>): Promise<void> {
    try {
      p.resolve(await one(p.item));
    } catch (err) {
      p.reject(err);
    }
  }

  async function runMany(rows: Pending<I, O>[]): Promise<void> {
    let out: Map<string, O>;
    try {
      out = await spec.many(rows.map((p) => p.item));
    } catch (err) {
      if (isUnavailable(err)) {
        for (const p of rows) p.reject(err);
        return;
      }
      for (const p of rows) await runOne(p);
      return;
    }
    for (const p of rows) {
      try {
        p.resolve(answer(out, p.item));
      } catch (err) {
        p.reject(err);
      }
    }
  }

  function flush(): void {
    const rows = batch;
    batch = [];
    keys = new Set();
    weight = 0;
    if (rows.length === 0) return;
    void (rows.length === 1 ? runOne(rows[0] as Pending<I, O>) : runMany(rows));
  }

  function onImmediate(): void {
    scheduled = false;
    flush();
  }

  return (item) =>
    new Promise<O>((resolve, reject) => {
      const k = spec.key(item);
      const w = spec.weight ? spec.weight(item) : 0;
      const repeated = !spec.keepRepeatedKeys && keys.has(k);
      if (repeated || (batch.length > 0 && weight + w > maxWeight)) flush();
      batch.push({ item, resolve, reject });
      keys.add(k);
      weight += w;
      if (batch.length >= maxRows || weight >= maxWeight) flush();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(onImmediate);
      }
    });
}

/** `($1::uuid, $2::text), ($3::uuid, $4::text), …`: n rows of placeholders with the given casts. */
export function valuesRows(n: number, casts: readonly string[]): string {
  const rows: string[] = [];
  for (let i = 0; i < n; i++) {
    const b = i * casts.length;
    rows.push(`(${casts.map((c, k) => `$${b + k + 1}::${c}`).join(', ')})`);
  }
  return rows.join(', ');
}

/** A statement built once per row count. */
export function memoByRows(build: (n: number) => string): (n: number) => string {
  const memo: string[] = [];
  return (n) => {
    memo[n] ??= build(n);
    return memo[n];
  };
}

/** Batches of up to this many rows run as named prepared statements (preparedName). */
const PREPARED_MAX_ROWS = 16;

/**
 * The prepared statement name of a batch statement of `n` rows (`<kind>_<n>`), or undefined above
 * PREPARED_MAX_ROWS: PostgreSQL then parses and plans the statement of a small batch once per
 * connection instead of at every call (the parse and plan of a multi-row VALUES list cost as much
 * as writing a few of its rows), while each connection keeps at most PREPARED_MAX_ROWS statements
 * of a kind. Larger batches are rare and pay the parse over many rows.
 */
export function preparedName(kind: string, n: number): string | undefined {
  return n <= PREPARED_MAX_ROWS ? `trawl_${kind}_${n}` : undefined;
}

/**
 * A batcher of per-job statements (claim, finish): keyed by the job id in lower case; a job the
 * statement did not change (finished or unknown) answers null.
 */
export function createJobStatementBatcher<I, O>(
  jobIdOf: (item: I) => string,
  spec: Omit<StatementBatchSpec<I, O | null>, 'key' | 'absent' | 'onAbsent'>,
): (item: I) => Promise<O | null> {
  return createStatementBatcher<I, O | null>({
    ...spec,
    key: (item) => jobIdOf(item).toLowerCase(),
    absent: null,
  });
}

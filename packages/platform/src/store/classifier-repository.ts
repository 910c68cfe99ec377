import type { SqlClient } from './types.ts';

/**
 * The learnt text classifier's state (issue 17): messages learnt per class and, per token (a
 * hashed feature, a non-negative integer below 2^53), the phishing and legitimate messages it
 * appeared in. The tokens and the model are the analyzers' (packages/analyzers/src/classifier);
 * the store only counts. Written once for PostgreSQL and PGlite.
 */
export interface ClassifierTotals {
  /** Moves on (+1) with every change; 0 for a state that never learnt anything. */
  version: number;
  /** Name and version of the tokeniser that produced the stored tokens ('' before any). */
  tokenizer: string;
  phishing: number;
  ham: number;
  updated_at: string;
}

/** Counts of one token: messages of each class it appeared in. */
export type TokenCounts = readonly [phishing: number, ham: number];

/** A change of the state: per token, what to add (negative to unlearn), and per class, messages. */
export interface ClassifierChange {
  tokenizer: string;
  /** token → [Δphishing, Δham] */
  tokens: ReadonlyMap<number, TokenCounts>;
  phishing: number;
  ham: number;
}

/** The whole state, as exported and imported. */
export interface ClassifierSnapshot {
  tokenizer: string;
  phishing: number;
  ham: number;
  tokens: Iterable<readonly [token: number, phishing: number, ham: number]>;
}

export interface ClassifierRepository {
  totals(): Promise<ClassifierTotals>;
  /** Counts of the given tokens that any learnt message holds (the others are absent). */
  counts(tokens: readonly number[]): Promise<Map<number, TokenCounts>>;
  /**
   * Adds a change in one transaction: counts never go below 0, tokens left at 0/0 are deleted, the
   * version moves on. Answers the totals after it.
   */
  apply(change: ClassifierChange): Promise<ClassifierTotals>;
  /** Every stored token, in token order, a page at a time (for export). */
  tokens(): AsyncIterable<[token: number, phishing: number, ham: number][]>;
  /** Replaces the whole state by a snapshot (import), in one transaction; the version moves on. */
  replace(s: ClassifierSnapshot): Promise<ClassifierTotals>;
}

interface TotalsRow {
  version: number | string;
  tokenizer: string;
  phishing_messages: number | string;
  ham_messages: number | string;
  updated_at: unknown;
}

function toTotals(r: TotalsRow | undefined): ClassifierTotals {
  if (!r) return { version: 0, tokenizer: '', phishing: 0, ham: 0, updated_at: '' };
  const at = r.updated_at instanceof Date ? r.updated_at.toISOString() : String(r.updated_at);
  return {
    version: Number(r.version),
    tokenizer: r.tokenizer,
    phishing: Number(r.phishing_messages),
    ham: Number(r.ham_messages),
    updated_at: at,
  };
}

const TOTALS_SQL =
  'SELECT version, tokenizer, phishing_messages, ham_messages, updated_at FROM classifier_state WHERE id = 1';

/** Rows per statement when writing tokens (three arrays of this length). */
const CHUNK = 20_000;
/** Rows per page when reading every token. */
const PAGE = 50_000;

async function upsert(tx: SqlClient, ids: number[], ps: number[], hs: number[]): Promise<void> {
  for (let i = 0; i < ids.length; i += CHUNK) {
    const a = ids.slice(i, i + CHUNK);
    await tx.query(
      `INSERT INTO classifier_tokens (token, phishing, ham)
       SELECT * FROM unnest($1::bigint[], $2::int[], $3::int[])
       ON CONFLICT (token) DO UPDATE SET
         phishing = classifier_tokens.phishing + EXCLUDED.phishing,
         ham = classifier_tokens.ham + EXCLUDED.ham`,
      [a, ps.slice(i, i + CHUNK), hs.slice(i, i + CHUNK)],
    );
  }
}

/** The classifier's token counts in the store. */
export function createClassifierRepository(sql: SqlClient): ClassifierRepository {
  return {
    async totals() {
      const r = await sql.query<TotalsRow>(TOTALS_SQL, [], 'classifier_totals');
      return toTotals(r.rows[0]);
    },
    async counts(tokens) {
      const out = new Map<number, TokenCounts>();
      if (tokens.length === 0) return out;
      const r = await sql.query<{ token: number | string; phishing: number; ham: number }>(
        'SELECT token, phishing, ham FROM classifier_tokens WHERE token = ANY($1::bigint[])',
        [tokens],
        'classifier_counts',
      );
      for (const row of r.rows) out.set(Number(row.token), [row.phishing, row.ham]);
      return out;
    },
    async apply(change) {
      return sql.transaction(async (tx) => {
        // one change at a time: the totals row is the lock (concurrent learners serialise here)
        await tx.query('SELECT 1 FROM classifier_state WHERE id = 1 FOR UPDATE');
        const ids: number[] = [];
        const ps: number[] = [];
        const hs: number[] = [];
        const negative: number[] = [];
        for (const [t, [p, h]] of change.tokens) {
          if (p === 0 && h === 0) continue;
          ids.push(t);
          ps.push(p);
          hs.push(h);
          if (p < 0 || h < 0) negative.push(t);
        }
        await upsert(tx, ids, ps, hs);
        for (let i = 0; i < negative.length; i += CHUNK) {
          const a = negative.slice(i, i + CHUNK);
          await tx.query(
            `UPDATE classifier_tokens SET phishing = GREATEST(phishing, 0), ham = GREATEST(ham, 0)
             WHERE token = ANY($1::bigint[]) AND (phishing < 0 OR ham < 0)`,
            [a],
          );
          await tx.query(
            'DELETE FROM classifier_tokens WHERE token = ANY($1::bigint[]) AND phishing = 0 AND ham = 0',
            [a],
          );
        }
        const r = await tx.query<TotalsRow>(
          `UPDATE classifier_state SET version = version + 1, tokenizer = $1,
             phishing_messages = GREATEST(0, phishing_messages + $2),
             ham_messages = GREATEST(0, ham_messages + $3), updated_at = now()
           WHERE id = 1
           RETURNING version, tokenizer, phishing_messages, ham_messages, updated_at`,
          [change.tokenizer, change.phishing, change.ham],
        );
        return toTotals(r.rows[0]);
      });
    },
    async *tokens() {
      let after = -1;
      for (;;) {
        const r = await sql.query<{ token: number | string; phishing: number; ham: number }>(
          'SELECT token, phishing, ham FROM classifier_tokens WHERE token > $1 ORDER BY token LIMIT $2',
          [after, PAGE],
        );
        if (r.rows.length === 0) return;
        const page: [number, number, number][] = r.rows.map((x) => [
          Number(x.token),
          x.phishing,
          x.ham,
        ]);
        yield page;
        after = page[page.length - 1]![0];
        if (r.rows.length < PAGE) return;
      }
    },
    async replace(s) {
      return sql.transaction(async (tx) => {
        await tx.query('SELECT 1 FROM classifier_state WHERE id = 1 FOR UPDATE');
        await tx.query('DELETE FROM classifier_tokens');
        let ids: number[] = [];
        let ps: number[] = [];
        let hs: number[] = [];
        const flush = async () => {
          await upsert(tx, ids, ps, hs);
          ids = [];
          ps = [];
          hs = [];
        };
        for (const [t, p, h] of s.tokens) {
          if (p <= 0 && h <= 0) continue;
          ids.push(t);
          ps.push(Math.max(0, p));
          hs.push(Math.max(0, h));
          if (ids.length >= CHUNK) await flush();
        }
        await flush();
        const r = await tx.query<TotalsRow>(
          `UPDATE classifier_state SET version = version + 1, tokenizer = $1,
             phishing_messages = $2, ham_messages = $3, updated_at = now()
           WHERE id = 1
           RETURNING version, tokenizer, phishing_messages, ham_messages, updated_at`,
          [s.tokenizer, Math.max(0, s.phishing), Math.max(0, s.ham)],
        );
        return toTotals(r.rows[0]);
      });
    },
  };
}

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPgliteClient, type SqlClient } from '../../src/index.ts';

/**
 * A named statement on PGlite is prepared once and then bound and executed (pglite-prepared.ts):
 * what it answers must be what PGlite's own `query` answers for the same text and values.
 */
describe('PGlite named statements', () => {
  let sql: SqlClient;
  beforeAll(async () => {
    sql = await createPgliteClient();
    await sql.exec(`CREATE TABLE t (
      id uuid PRIMARY KEY, n int, big bigint, s text, j jsonb, at timestamptz, ok boolean,
      tags text, f double precision)`);
  });
  beforeEach(() => sql.exec('TRUNCATE t'));
  afterAll(() => sql.close());

  const INSERT = `INSERT INTO t (id, n, big, s, j, at, ok, tags, f)
    SELECT * FROM unnest($1::uuid[], $2::int[], $3::bigint[], $4::text[], $5::jsonb[],
      $6::timestamptz[], $7::bool[], $8::text[], $9::float8[])
    RETURNING *, n + 1 AS n1, j->'a' AS ja, tags AS tags_again`;
  const params = (k: number): unknown[] => [
    [`00000000-0000-4000-8000-00000000000${k}`, `00000000-0000-4000-8000-00000000001${k}`],
    [k, null],
    ['9007199254740993', '-1'],
    [`a'b\\c "${k}"`, 'é ✓ \u{1f600}'],
    [JSON.stringify({ a: [1, 'x', null], b: { c: true } }), 'null'],
    [new Date(Date.UTC(2026, 11, 8, 3, 0, k)).toISOString(), null],
    [true, false],
    ['{"x,y","z"}', '{}'],
    [1.5, -0],
  ];
  const READ = `SELECT id, n, big, s, j, at, ok, f, $1::text AS echo, $2::jsonb AS doc,
      $3::int[] AS ints, $4::timestamptz AS t4, $5::uuid AS u
    FROM t WHERE n IS DISTINCT FROM $6 ORDER BY id`;
  const readParams: unknown[] = [
    null,
    { deep: { list: [1, 2, 3] }, s: 'q"uote' },
    [1, 2, 3],
    new Date(Date.UTC(2026, 0, 1)),
    '00000000-0000-4000-8000-000000000099',
    -5,
  ];

  it('answers the rows PGlite query answers, every type, values and nulls', async () => {
    const plain = await sql.transaction(async (tx) => {
      const r = await tx.query(INSERT, params(1));
      await tx.query('DELETE FROM t');
      return r;
    });
    const named = await sql.transaction(async (tx) => {
      const r = await tx.query(INSERT, params(1), 'insert_t');
      await tx.query('DELETE FROM t');
      return r;
    });
    expect(named).toEqual(plain);
    expect(plain.rows).toHaveLength(2);

    await sql.query(INSERT, params(2), 'insert_t');
    const a = await sql.query(READ, readParams);
    const b = await sql.query(READ, readParams, 'read_t');
    expect(b).toEqual(a);
    expect(b.rows[0]).toMatchObject({ doc: readParams[1], ints: [1, 2, 3] });
    // again: the statement is prepared, no longer parsed
    expect(await sql.query(READ, readParams, 'read_t')).toEqual(a);
    // rowCount of a statement that answers no rows
    const upd = await sql.query('UPDATE t SET n = n WHERE s IS NOT NULL', [], 'touch');
    const updPlain = await sql.query('UPDATE t SET n = n WHERE s IS NOT NULL', []);
    expect(upd.rowCount).toBe(updPlain.rowCount);
    expect(upd.rowCount).toBe(2);
  });

  it('throws the database error and goes on: a violated key, a statement that does not parse', async () => {
    await sql.query(INSERT, params(3), 'insert_t');
    const err = await sql.query(INSERT, params(3), 'insert_t').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: '23505' });
    // a text that fails to parse is not kept: the name can still be prepared with a good text
    await expect(sql.query('SELEC 1', [], 'bad_text')).rejects.toMatchObject({ code: '42601' });
    expect((await sql.query('SELECT 1 AS one', [], 'bad_text')).rows).toEqual([{ one: 1 }]);
    expect((await sql.query(READ, readParams, 'read_t')).rows).toHaveLength(2);
  });

  it('rolls back with its transaction and waits for one that is open', async () => {
    await expect(
      sql.transaction(async (tx) => {
        await tx.query(INSERT, params(4), 'insert_t');
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    expect((await sql.query('SELECT count(*)::int AS c FROM t', [], 'count_t')).rows).toEqual([
      { c: 0 },
    ]);
    // a named statement outside the transaction runs after it, not inside it
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const tx = sql.transaction(async (t) => {
      await t.query(INSERT, params(5), 'insert_t');
      await held;
      throw new Error('undo');
    });
    const outside = sql.query('SELECT count(*)::int AS c FROM t', [], 'count_t');
    await new Promise((r) => setTimeout(r, 20));
    release();
    await expect(tx).rejects.toThrow('undo');
    expect((await outside).rows).toEqual([{ c: 0 }]);
  });
});

import { type PGlite, parse as pgliteParse, protocol, type Results } from '@electric-sql/pglite';

type Messages = Awaited<ReturnType<PGlite['execProtocolStream']>>;

/**
 * Named prepared statements on PGlite. `PGlite.query` parses, analyses and plans its text on
 * every call (an unnamed statement): for the store's large batch statements that is about half of
 * their time (the job record of eight jobs: ~6 ms of planning in ~13, on PGlite's one thread).
 * A statement the store names (as it names them on PostgreSQL, where pg keeps them per
 * connection) is parsed once here and then only bound and executed, as PostgreSQL runs a prepared
 * statement: custom plans for its first executions, a generic plan once it is no dearer. The
 * messages are PGlite's own (`protocol.serialize`), its values serialised and its rows parsed as
 * `query` does (`serializers`, `parse.parseResults`), so a row reads the same either way
 * (pglite-prepared.test.ts compares them).
 *
 * PGlite has one connection, so a name is prepared once for the life of the database; the same
 * name must always carry the same text (the SqlClient contract).
 */
export function pglitePrepared(db: PGlite) {
  const prepared = new Map<string, number[]>();
  const send = (m: Uint8Array): Promise<Messages> => db.execProtocolStream(m, { syncToFs: false });

  /** Runs `name` (`text`) with `params`; `inTransaction`: inside PGlite.transaction's callback. */
  return async function query(
    name: string,
    text: string,
    params: readonly unknown[],
    inTransaction: boolean,
  ): Promise<Results> {
    const run = () =>
      db._runExclusiveQuery(async () => {
        const out: Messages = [];
        try {
          let types = prepared.get(name);
          if (types === undefined) {
            out.push(...(await send(protocol.serialize.parse({ name, text }))));
            types = pgliteParse.parseDescribeStatementResults(
              await send(protocol.serialize.describe({ type: 'S', name })),
            );
            prepared.set(name, types);
          }
          const values = params.map((v, i) => {
            if (v === null || v === undefined) return null;
            const to = db.serializers[types[i] as number];
            return to ? to(v) : String(v);
          });
          out.push(
            ...(await send(protocol.serialize.bind({ statement: name, values }))),
            ...(await send(protocol.serialize.describe({ type: 'P' }))),
            ...(await send(protocol.serialize.execute({}))),
          );
        } finally {
          out.push(...(await send(protocol.serialize.sync())));
        }
        // as `query` does: the files are synced after a statement outside a transaction
        if (!inTransaction) await db.syncToFs();
        return pgliteParse.parseResults(out, db.parsers)[0] as Results;
      });
    // a statement outside a transaction waits for the open one, as `query` does
    return inTransaction ? run() : db._runExclusiveTransaction(run);
  };
}

import type { ListKind, ListName } from '@trawl/contracts';
import type { ListRepository, LiveListEntry } from '@trawl/platform';

/** The entries of one list and kind, by value. */
type ByValue = Map<string, LiveListEntry>;

/** Every live entry, by list and kind: what a message is matched against. */
export interface ListTables {
  get(list: ListName, kind: ListKind): ByValue;
  /** Entries in all (an empty table: the analyzer has nothing to say). */
  size: number;
}

function tablesOf(entries: LiveListEntry[]): ListTables {
  const m = new Map<string, ByValue>();
  for (const e of entries) {
    const k = `${e.list}:${e.kind}`;
    let t = m.get(k);
    if (!t) {
      t = new Map();
      m.set(k, t);
    }
    t.set(e.value, e);
  }
  const none: ByValue = new Map();
  return { get: (list, kind) => m.get(`${list}:${kind}`) ?? none, size: entries.length };
}

/**
 * The lists as the analyzer reads them on the hot path: every live entry in memory, read again
 * when `reload` is called (a `lists.changed` control event) or when older than `maxAgeMs` (a
 * missed event: the next message reads them again in the background and is matched against what
 * was held). Never a query per message. An entry that expires while held stops matching at once.
 */
export interface ListCache {
  tables(maxAgeMs: number): Promise<ListTables>;
  /** Reads the lists now; resolves when the new ones are in use. */
  reload(): Promise<void>;
}

/** The lists held in memory for the analyzers (see ListCache), read from the store. */
export function createListCache(
  repo: Pick<ListRepository, 'live'>,
  o: { now?: () => number } = {},
): ListCache {
  const now = o.now ?? Date.now;
  let held: { at: number; tables: ListTables } | undefined;
  let loading: Promise<void> | undefined;
  const load = () => {
    loading ??= repo
      .live(new Date(now()))
      .then((entries) => {
        held = { at: now(), tables: tablesOf(entries) };
      })
      .finally(() => {
        loading = undefined;
      });
    return loading;
  };
  return {
    async tables(maxAgeMs) {
      if (!held) await load();
      else if (now() - held.at >= maxAgeMs) load().catch(() => undefined);
      return (held as { tables: ListTables }).tables;
    },
    // a change during a read in flight may not be in it: read once more after it
    reload: () => (loading ? loading.then(load, load) : load()),
  };
}

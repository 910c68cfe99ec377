import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import {
  type ChangePage,
  CursorExpiredError,
  type MailboxSource,
  memorySyncStore,
  SyncLedger,
} from '../../src/index.ts';

/** A folder whose changes come in pages of 2 ids; cursor `p<n>` = page n, `d<n>` = round from n. */
function folder(ids: string[]) {
  const all = [...ids];
  let expired = false;
  const source: MailboxSource = {
    mailbox: 'reports@corp.example',
    prepare: async () => {},
    async changes(cursor): Promise<ChangePage> {
      if (expired && cursor?.startsWith('d')) throw new CursorExpiredError('delta');
      const from = cursor === undefined ? 0 : Number(cursor.slice(1));
      const page = all.slice(from, from + 2);
      const to = from + page.length;
      const done = to >= all.length;
      return { ids: page, next: done ? `d${to}` : `p${to}`, done };
    },
    fetchRaw: async () => Buffer.from('x'),
    markProcessed: async () => {},
    applyVerdict: async () => 'x',
  };
  return { source, add: (id: string) => all.push(id), expire: () => (expired = true) };
}

const silent = pino({ level: 'silent' });

describe('SyncLedger: the sync token moves only past acked pages', () => {
  it('keeps the token at the oldest page with an unacked message, and resumes there', async () => {
    const f = folder(['a', 'b', 'c', 'd', 'e']);
    const store = memorySyncStore();
    const l = new SyncLedger(f.source, store, 'k', silent);
    await l.fill(10);
    expect(l.peek(10)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(await store.get('k')).toBeNull(); // a full sync, nothing acked
    await l.settle('a');
    await l.settle('b');
    expect(await store.get('k')).toBe('p2');
    await l.settle('d'); // c still waits: the token stays before c's page
    expect(await store.get('k')).toBe('p2');
    // a restart: a new ledger pulls again from p2, and hands out c (and d, which is harmless)
    const again = new SyncLedger(f.source, store, 'k', silent);
    await again.fill(10);
    expect(again.peek(10)).toEqual(['c', 'd', 'e']);
    for (const id of ['c', 'd', 'e']) await again.settle(id);
    expect(await store.get('k')).toBe('d5');
    f.add('f');
    await again.fill(10);
    expect(again.peek(10)).toEqual(['f']);
  });

  it('an expired token starts a full resync instead of failing', async () => {
    const f = folder(['a', 'b']);
    const store = memorySyncStore();
    const l = new SyncLedger(f.source, store, 'k', silent);
    await l.fill(10);
    await l.settle('a');
    await l.settle('b');
    expect(await store.get('k')).toBe('d2');
    f.expire();
    f.add('c');
    let resyncs = 0;
    const l2 = new SyncLedger(f.source, store, 'k', silent, { onResync: () => resyncs++ });
    await l2.fill(10);
    expect(resyncs).toBe(1);
    expect(l2.peek(10)).toEqual(['a', 'b', 'c']);
  });
});

import { describe, expect, it } from 'vitest';
import type { ClassifierRepository } from '../store/classifier-repository.ts';
import type { SqlClient } from '../store/types.ts';
import { migratedSuite } from './migrated-suite.ts';

/**
 * The learnt classifier's store (issue 17): PostgreSQL and PGlite must both pass it. `makeSql`
 * answers a client on an empty database/schema (migrated here) and its cleanup.
 */
export function classifierStoreConformance(
  name: string,
  makeSql: () => Promise<{ sql: SqlClient; cleanup(): Promise<void> }>,
): void {
  describe(`classifier store conformance: ${name}`, () => {
    let repo: ClassifierRepository;
    migratedSuite(makeSql, (_target, store) => {
      repo = store.classifier;
    });

    const big = 2 ** 48 - 7; // tokens are 48-bit: they must survive the bigint column exactly

    it('starts empty, at version 0', async () => {
      expect(await repo.totals()).toMatchObject({ version: 0, phishing: 0, ham: 0, tokenizer: '' });
      expect((await repo.counts([1, 2, big])).size).toBe(0);
    });

    it('adds a change, moves the version on, and unlearning it leaves no token behind', async () => {
      const a = await repo.apply({
        tokenizer: 't1',
        tokens: new Map([
          [1, [2, 0]],
          [big, [1, 1]],
        ]),
        phishing: 2,
        ham: 1,
      });
      expect(a).toMatchObject({ version: 1, tokenizer: 't1', phishing: 2, ham: 1 });
      const c = await repo.counts([1, big, 3]);
      expect(c.get(1)).toEqual([2, 0]);
      expect(c.get(big)).toEqual([1, 1]);
      expect(c.has(3)).toBe(false);
      const b = await repo.apply({
        tokenizer: 't1',
        tokens: new Map([
          [1, [-2, 0]],
          [big, [-1, -1]],
          [5, [0, -1]], // unlearning a token never learnt: nothing below 0
        ]),
        phishing: -2,
        ham: -1,
      });
      expect(b).toMatchObject({ version: 2, phishing: 0, ham: 0 });
      expect((await repo.counts([1, big, 5])).size).toBe(0);
      const all: number[] = [];
      for await (const page of repo.tokens()) for (const [t] of page) all.push(t);
      expect(all).toEqual([]);
    });

    it('replaces the whole state from a snapshot and pages through every token in order', async () => {
      const n = 60_123; // more than one page and more than one statement
      const snap = Array.from({ length: n }, (_, i) => [i * 3 + 1, i % 5, (i + 1) % 3] as const);
      const t = await repo.replace({ tokenizer: 't2', phishing: 300, ham: 250, tokens: snap });
      expect(t).toMatchObject({ tokenizer: 't2', phishing: 300, ham: 250 });
      expect(t.version).toBeGreaterThan(2);
      const read: [number, number, number][] = [];
      for await (const page of repo.tokens()) read.push(...page);
      const kept = snap.filter(([, p, h]) => p > 0 || h > 0);
      expect(read.length).toBe(kept.length);
      expect(read[0]).toEqual([...kept[0]!]);
      expect(read.at(-1)).toEqual([...kept.at(-1)!]);
    }, 120_000);

    it('serialises concurrent changes: none is lost', async () => {
      const before = await repo.totals();
      await Promise.all(
        Array.from({ length: 8 }, () =>
          repo.apply({ tokenizer: 't2', tokens: new Map([[7, [1, 0]]]), phishing: 1, ham: 0 }),
        ),
      );
      const after = await repo.totals();
      expect(after.phishing).toBe(before.phishing + 8);
      expect(after.version).toBe(before.version + 8);
      // token 7 held 2 phishing messages in the snapshot
      expect((await repo.counts([7])).get(7)?.[0]).toBe(10);
    });
  });
}

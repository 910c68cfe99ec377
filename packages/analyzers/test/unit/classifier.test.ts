import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Email } from '@trawl/contracts';
import { createClassifierRepository, createMigratedPglite } from '@trawl/platform';
import { describe, expect, it } from 'vitest';
import {
  analyzeClassifier,
  ClassifierSettings,
  cachedSource,
  exportState,
  featuresOf,
  importState,
  learn,
  learnMany,
  MemoryModel,
  memorySource,
  tokensOf,
  unlearn,
} from '../../src/classifier/index.ts';
import { mboxMessages } from '../../src/classifier/mail-source.ts';

const mail = (subject: string, body: string, extraHeaders: Record<string, string> = {}) =>
  Email.parse({
    headers: {
      subject,
      sender: 'a@example.com',
      recipients: ['b@example.org'],
      date: '2024-05-01T09:30:00Z',
      raw_headers: {
        received: 'from mx.example by mx2.example',
        'message-id': '<x@example.com>',
        'x-mailer': 'Mailer 1',
        ...extraHeaders,
      },
    },
    body_text: body,
  });

const PHISH = (i: number) =>
  mail(
    `Verify your account ${i}`,
    `Dear customer your mailbox is suspended, verify your password now at http://login-verify${i % 7}.example.top/secure`,
  );
const HAM = (i: number) =>
  mail(
    `Minutes of the meeting ${i}`,
    `Hi all, attached are the minutes of Tuesday's planning meeting; the next one is on Thursday at the usual room ${i}.`,
  );

describe('classifier tokeniser', () => {
  it('builds OSB pairs over a window of 5 and never reads collection headers', () => {
    const f = featuresOf(mail('hello world', 'one two three four five six'));
    expect(f).toContain('b:six');
    expect(f).toContain('b:two\u00014\u0001six');
    expect(f).not.toContain('b:one\u00015\u0001six'); // the window is 5 words: 4 back at most
    expect(f.some((x) => /mx2|mailer|x@example/.test(x))).toBe(false);
    const a = tokensOf(
      mail('s', 'same words', { received: 'from elsewhere', 'x-mailer': 'Other' }),
    );
    const b = tokensOf(mail('s', 'same words'));
    expect(a.sort()).toEqual(b.sort());
    for (const t of a) expect(Number.isSafeInteger(t) && t >= 0 && t < 2 ** 30).toBe(true);
  });
});

describe('classifier model', () => {
  it('unlearning what was learnt gives the state back exactly', () => {
    const m = new MemoryModel();
    for (let i = 0; i < 20; i++) m.train(tokensOf(HAM(i)), 'legitimate');
    const before = [...m.entries()].sort((a, b) => a[0] - b[0]);
    const t = tokensOf(PHISH(1));
    m.train(t, 'phishing');
    m.train(t, 'phishing', -1);
    expect(m.phishing).toBe(0);
    expect([...m.entries()].sort((a, b) => a[0] - b[0])).toEqual(before);
  });

  it('abstains below 200 messages of each class, then reports one bounded symbol', async () => {
    const m = new MemoryModel();
    for (let i = 0; i < 199; i++) m.train(tokensOf(PHISH(i)), 'phishing');
    for (let i = 0; i < 250; i++) m.train(tokensOf(HAM(i)), 'legitimate');
    const s = ClassifierSettings.parse({});
    const src = () => cachedSource(memorySource(m), { ttlMs: 0, maxEntries: 1000 });
    const a = await analyzeClassifier(PHISH(999), s, src());
    expect(a.analyzer_details?.symbols).toEqual([]);
    expect(a.analyzer_details?.available).toBe(false);
    m.train(tokensOf(PHISH(199)), 'phishing');
    const p = await analyzeClassifier(PHISH(999), s, src());
    expect(p.analyzer_details?.symbols).toEqual(['bayes_phish']);
    const ps = (p.analyzer_details?.scores as Record<string, number> | undefined)?.bayes_phish ?? 0;
    expect(ps).toBeGreaterThan(0);
    expect(ps).toBeLessThanOrEqual(2.5);
    const h = await analyzeClassifier(HAM(999), s, src());
    expect(h.analyzer_details?.symbols).toEqual(['bayes_ham']);
    const hs = (h.analyzer_details?.scores as Record<string, number> | undefined)?.bayes_ham ?? 0;
    expect(hs).toBeLessThan(0);
    expect(hs).toBeGreaterThanOrEqual(-0.5);
    // the minimum is configurable
    const low = ClassifierSettings.parse({ min_phishing_messages: 500 });
    expect((await analyzeClassifier(PHISH(999), low, src())).analyzer_details?.symbols).toEqual([]);
  });
});

describe('classifier state in the store (PGlite)', () => {
  it('learns, unlearns, exports and imports the same state', async () => {
    const sql = await createMigratedPglite();
    const dir = mkdtempSync(join(tmpdir(), 'trawl-clf-'));
    try {
      const repo = createClassifierRepository(sql);
      await learnMany(
        repo,
        Array.from({ length: 30 }, (_, i) => ({
          tokens: tokensOf(PHISH(i)),
          label: 'phishing' as const,
        })),
      );
      await learn(repo, HAM(1), 'legitimate');
      const v = await learn(repo, HAM(2), 'legitimate');
      await unlearn(repo, HAM(2), 'legitimate');
      const t = await repo.totals();
      expect(t).toMatchObject({ phishing: 30, ham: 1, version: v.version + 1 });
      const file = join(dir, 'state.jsonl');
      const h = await exportState(repo, file);
      expect(h).toMatchObject({
        format: 'trawl-classifier',
        phishing_messages: 30,
        ham_messages: 1,
      });
      const first: [number, number, number][] = [];
      for await (const p of repo.tokens()) first.push(...p);
      // a state learnt elsewhere replaces this one, and comes back the same
      await learn(repo, HAM(3), 'legitimate');
      const after = await importState(repo, file);
      expect(after).toMatchObject({ phishing: 30, ham: 1 });
      const second: [number, number, number][] = [];
      for await (const p of repo.tokens()) second.push(...p);
      expect(second).toEqual(first);
      expect(readFileSync(file, 'utf8').split('\n')[0]).toContain('"tokenizer":"osb5-v1"');
    } finally {
      await sql.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('classifier analyzer on the store (PGlite)', () => {
  it('abstains until 200/200 are learnt in the store, then reads the state through its cache', async () => {
    const sql = await createMigratedPglite();
    try {
      const repo = createClassifierRepository(sql);
      const s = ClassifierSettings.parse({ cache_ttl_ms: 0 });
      const src = cachedSource(repo, { ttlMs: 0, maxEntries: 10_000 });
      const phish = Array.from({ length: 200 }, (_, i) => ({
        tokens: tokensOf(PHISH(i)),
        label: 'phishing' as const,
      }));
      await learnMany(repo, phish);
      await learnMany(
        repo,
        Array.from({ length: 199 }, (_, i) => ({
          tokens: tokensOf(HAM(i)),
          label: 'legitimate' as const,
        })),
      );
      expect((await analyzeClassifier(PHISH(999), s, src)).analyzer_details?.symbols).toEqual([]);
      await learn(repo, HAM(199), 'legitimate');
      const a = await analyzeClassifier(PHISH(999), s, src);
      expect(a.analyzer_details?.symbols).toEqual(['bayes_phish']);
      expect(a.analyzer_details?.learnt).toMatchObject({ phishing: 200, ham: 200 });
    } finally {
      await sql.close();
    }
  }, 60_000);
});

describe('mbox reading', () => {
  it('splits at From lines and unquotes >From', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trawl-mbox-'));
    try {
      const f = join(dir, 'box.mbox');
      const { writeFileSync } = await import('node:fs');
      writeFileSync(
        f,
        'From a@x Mon Jan  1 00:00:00 2024\nSubject: one\n\n>From here\n\nFrom b@x Mon Jan  1 00:00:00 2024\nSubject: two\n\nbody\n',
      );
      const got: string[] = [];
      for await (const m of mboxMessages(f)) got.push(m.raw.toString());
      expect(got).toHaveLength(2);
      expect(got[0]).toContain('From here');
      expect(got[0]).not.toContain('>From');
      expect(got[1]).toContain('Subject: two');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

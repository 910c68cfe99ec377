import { createHash } from 'node:crypto';
import type { AnalyzerResult, Email } from '@trawl/contracts';
import type { LiveListEntry } from '@trawl/platform';
import { describe, expect, it } from 'vitest';
import { analyzeLists, type ListMatch } from '../../src/lists/analyzer.ts';
import { ListsSettings } from '../../src/lists/settings.ts';
import { createListCache } from '../../src/lists/source.ts';
import { ensembleScore, parseWeights } from '../../src/scorer/index.ts';

const settings = ListsSettings.parse({});
const PDF = Buffer.from('%PDF-1.4 the vendor order form');
const PDF_SHA = createHash('sha256').update(PDF).digest('hex');

function email(o: { from?: string; auth?: string; html?: string; pdf?: boolean } = {}): Email {
  const from = o.from ?? 'billing@vendor.example';
  return {
    headers: {
      subject: 'Invoice',
      sender: from,
      recipients: ['ann@corp.example'],
      date: '2026-11-01T10:00:00Z',
      raw_headers: {
        received: 'from mail.vendor.example ([203.0.113.9]) by mx.corp.example; Sun, 1 Nov 2026',
        ...(o.auth ? { 'authentication-results': `mx.corp.example; ${o.auth}` } : {}),
      },
    },
    body_html: o.html ?? '<p>See <a href="https://files.vendor.example/inv">the invoice</a></p>',
    ...(o.pdf
      ? {
          attachments: [
            {
              filename: 'order.pdf',
              content_type: 'application/pdf',
              content: PDF.toString('base64'),
            },
          ],
        }
      : {}),
    analysis_context: {},
  } as Email;
}

let n = 0;
function entry(list: 'allow' | 'block', kind: LiveListEntry['kind'], value: string, over = {}) {
  return { id: `e${++n}`, list, kind, value, note: null, expires_at_ms: null, ...over };
}

async function run(entries: LiveListEntry[], e: Email, now = Date.now()) {
  const cache = createListCache({ live: async () => entries });
  return analyzeLists(e, settings, await cache.tables(60_000), now);
}

const matches = (a: Awaited<ReturnType<typeof run>>) => a.analyzer_details?.matches as ListMatch[];
const symbols = (a: Awaited<ReturnType<typeof run>>) => a.analyzer_details?.symbols as string[];

const DMARC_PASS =
  'spf=pass smtp.mailfrom=vendor.example; dkim=pass header.d=vendor.example; dmarc=pass header.from=vendor.example';

describe('lists analyzer (issue 32)', () => {
  it('blocks a sender, a domain and its subdomains, a link host and an attachment hash', async () => {
    const a = await run(
      [
        entry('block', 'sender_domain', 'vendor.example'),
        entry('block', 'url_host', 'vendor.example'),
        entry('block', 'sha256', PDF_SHA),
      ],
      email({ from: 'x@mail.vendor.example', pdf: true }),
    );
    expect(symbols(a).sort()).toEqual([
      'list_block_sender_domain',
      'list_block_sha256',
      'list_block_url_host',
    ]);
    expect(a.is_phishing).toBe(true);
    expect(matches(a).map((m) => m.matched)).toContain('files.vendor.example');
  });

  it('counts a sender allow only when the sender domain authenticated the message', async () => {
    const entries = [entry('allow', 'sender', 'billing@vendor.example')];
    const spoofed = await run(entries, email());
    expect(symbols(spoofed)).toEqual([]);
    expect(matches(spoofed)[0]).toMatchObject({ counted: false });
    expect(matches(spoofed)[0]?.reason).toMatch(/did not authenticate/);
    const signed = await run(entries, email({ auth: DMARC_PASS }));
    expect(symbols(signed)).toEqual(['list_allow_sender']);
    expect(signed.indicators.map((i) => i.type)).toEqual(['allow_listed']);
    const dmarcFail = await run(
      [entry('allow', 'sender_domain', 'vendor.example')],
      email({ auth: 'spf=fail; dkim=fail; dmarc=fail header.from=vendor.example' }),
    );
    expect(symbols(dmarcFail)).toEqual([]);
  });

  it('a block always wins: no allow counts beside it', async () => {
    const a = await run(
      [
        entry('allow', 'sender_domain', 'vendor.example'),
        entry('block', 'url_host', 'files.vendor.example'),
      ],
      email({ auth: DMARC_PASS }),
    );
    expect(symbols(a)).toEqual(['list_block_url_host']);
    const allow = matches(a).find((m) => m.list === 'allow');
    expect(allow).toMatchObject({
      counted: false,
      reason: 'a block matched too: a block always wins',
    });
  });

  it('allows links only when every link goes to an allowed host', async () => {
    const entries = [entry('allow', 'url_host', 'vendor.example')];
    expect(symbols(await run(entries, email()))).toEqual(['list_allow_url_host']);
    const mixed = email({
      html: '<a href="https://files.vendor.example/a">a</a> <a href="https://evil.example/b">b</a>',
    });
    expect(symbols(await run(entries, mixed))).toEqual([]);
  });

  it('ignores an expired entry at once, and an empty list says nothing', async () => {
    const now = Date.now();
    const expired = entry('block', 'sender', 'billing@vendor.example', { expires_at_ms: now - 1 });
    expect(symbols(await run([expired], email(), now))).toEqual([]);
    expect(symbols(await run([], email()))).toEqual([]);
  });

  it('reads the lists again on reload, not per message', async () => {
    let reads = 0;
    let entries: LiveListEntry[] = [];
    const cache = createListCache({
      live: async () => {
        reads++;
        return entries;
      },
    });
    for (let i = 0; i < 5; i++) await cache.tables(60_000);
    expect(reads).toBe(1);
    entries = [entry('block', 'sender', 'billing@vendor.example')];
    await cache.reload();
    expect(reads).toBe(2);
    expect(
      analyzeLists(email(), settings, await cache.tables(60_000), Date.now()).is_phishing,
    ).toBe(true);
  });
});

function result(id: string, details: Record<string, unknown>): AnalyzerResult {
  return {
    analyzer_id: id,
    status: 'success',
    is_phishing: false,
    confidence: 0.9,
    threat_level: 'none',
    indicators: [],
    analyzer_details: details,
    attempts: 1,
    duration_ms: 1,
  };
}

describe('scorer: an allow never excuses a threat-feed listing or a payload', () => {
  const weights = parseWeights('bias: -3\n', 'test');
  const allow = result('lists', {
    symbols: ['list_allow_sender'],
    scores: { list_allow_sender: -8 },
    groups: { list_allow_sender: 'org_allow' },
  });
  const score = (analyzers: Record<string, AnalyzerResult>) =>
    ensembleScore({ offline: { providers: {}, analyzers } }, weights, {
      stages: [],
      maxLogOdds: 12,
    });

  it('counts the allow alone', () => {
    const e = score({ lists: allow });
    expect(e.groups.org_allow).toMatchObject({ counted: -8 });
    expect(e.logOdds).toBeCloseTo(-11);
  });

  for (const [group, symbol] of [
    ['threat_intel', 'intel_url_listed'],
    ['payload', 'executable_attachment'],
  ] as const) {
    it(`counts nothing of the allow when ${group} counted`, () => {
      const other = result('x', {
        symbols: [symbol],
        scores: { [symbol]: 5 },
        groups: { [symbol]: group },
      });
      const e = score({ lists: allow, x: other });
      expect(e.groups.org_allow).toMatchObject({ counted: 0, yielded_to: group });
      expect(e.logOdds).toBeCloseTo(-3 + 5);
    });
  }
});

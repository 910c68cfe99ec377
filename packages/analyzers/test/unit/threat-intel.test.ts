import { describe, expect, it } from 'vitest';
import { FeedBuilder } from '../../src/threat-intel/feed-data.ts';
import { parsePhishTank, parseUrlhaus } from '../../src/threat-intel/formats.ts';
import { HashSetBuilder } from '../../src/threat-intel/hash-set.ts';
import { hostLadder, normalizeHost, urlKeys } from '../../src/threat-intel/normalize.ts';
import { ThreatIntelSettings } from '../../src/threat-intel/settings.ts';

describe('threat-intel normalisation', () => {
  it('spells a URL one way whatever the scheme, case, port, trailing slash, fragment or escapes', () => {
    const same = [
      'http://evil.example/a/b',
      'HTTPS://EVIL.example:443/a/b/',
      'https://evil.example./a/b#frag',
      'https://evil.example/%61/b',
      'evil.example/a/b',
    ].map((u) => urlKeys(u)?.full);
    expect(new Set(same)).toEqual(new Set(['evil.example/a/b']));
    expect(urlKeys('https://evil.example/A/b')?.full).not.toBe('evil.example/a/b'); // paths keep case
    expect(urlKeys('https://evil.example:8443/x?q=1')).toEqual({
      full: 'evil.example:8443/x?q=1',
      withoutQuery: 'evil.example:8443/x',
      host: 'evil.example',
    });
    expect(urlKeys('mailto:a@b.example')).toBeUndefined();
    expect(urlKeys('javascript:alert(1)')).toBeUndefined();
  });

  it('looks a host up from itself down to its registrable domain, never a public suffix', () => {
    expect(hostLadder('a.b.evil.co.uk', 'evil.co.uk')).toEqual([
      'a.b.evil.co.uk',
      'b.evil.co.uk',
      'evil.co.uk',
    ]);
    expect(hostLadder('evil.example', 'evil.example')).toEqual(['evil.example']);
    expect(normalizeHost('Bücher.Example.')).toBe('xn--bcher-kva.example');
    expect(normalizeHost('2001:db8::1')).toBe('[2001:db8::1]');
  });
});

describe('threat-intel memory-efficient sets', () => {
  it('holds 300 000 URLs in 8 bytes each and finds every one, and no other', async () => {
    const b = new FeedBuilder(5_000_000);
    for (let i = 0; i < 300_000; i++) b.addUrl(`https://host${i % 997}.phish.test/p/${i}?k=${i}`);
    const snap = b.build();
    expect(snap.urls.size).toBe(300_000);
    let found = 0;
    for (let i = 0; i < 300_000; i += 7)
      if (snap.urls.has(urlKeys(`https://host${i % 997}.phish.test/p/${i}?k=${i}`)!.full)) found++;
    expect(found).toBe(Math.ceil(300_000 / 7));
    let false_ = 0;
    for (let i = 0; i < 100_000; i++) if (snap.urls.has(`clean${i}.example/x`)) false_++;
    expect(false_).toBe(0);
  });

  it('deduplicates and stops at max_entries_per_feed, counting what it dropped', () => {
    const h = new HashSetBuilder();
    for (const k of ['a', 'b', 'a', 'c', 'b']) h.add(k);
    expect(h.build().size).toBe(3);
    const b = new FeedBuilder(2);
    for (const u of ['http://a.test/', 'http://b.test/', 'http://c.test/', 'not a url'])
      b.addUrl(u);
    expect(b.build()).toMatchObject({ entries: 2, dropped: 1, skipped: 1 });
  });
});

describe('threat-intel formats', () => {
  it('finds the url column of a URLhaus export from its comment header, old or new', async () => {
    const old = [
      '# id,dateadded,url,url_status,threat,tags,urlhaus_link,reporter',
      '"1","2020-01-01 00:00:00","http://old.test/x","offline","malware_download","exe","https://urlhaus.abuse.ch/url/1/","r"',
    ].join('\n');
    const b = new FeedBuilder(10);
    await parseUrlhaus(old, b, 'u');
    expect(b.build().urls.has('old.test/x')).toBe(true);
  });

  it('refuses a PhishTank dump that is neither its JSON nor its CSV', async () => {
    await expect(parsePhishTank('{"not": "an array"}', new FeedBuilder(10), 'pt')).rejects.toThrow(
      /not a PhishTank JSON dump/,
    );
    await expect(parsePhishTank('a,b\n1,2\n', new FeedBuilder(10), 'pt')).rejects.toThrow(
      /no url column/,
    );
  });

  it('settings: off with no feed by default; unique names; a MISP key only from a file', () => {
    const d = ThreatIntelSettings.parse({});
    expect(d.feeds).toEqual([]);
    expect(d.misp.url).toBe('');
    expect('api_key' in d.misp).toBe(false);
    expect(
      ThreatIntelSettings.safeParse({
        feeds: [
          { name: 'x', format: 'openphish', source: '/tmp/a' },
          { name: 'x', format: 'urlhaus', source: '/tmp/b' },
        ],
      }).success,
    ).toBe(false);
  });
});

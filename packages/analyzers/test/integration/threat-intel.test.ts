import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Email, type EmailInput } from '@trawl/contracts';
import { invokeAnalyzer, invokeProvider } from '@trawl/plugin-sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensembleScore } from '../../src/scorer/analyzer.ts';
import {
  createThreatIntelProvider,
  intelAnalyzer,
  THREAT_INTEL_ERROR_CODES,
  ThreatIntel,
  ThreatIntelData,
  ThreatIntelSettings,
} from '../../src/threat-intel/index.ts';

// Feeds in their published formats, synthetic, served by a local HTTP server; a fake MISP instance
// that speaks restSearch. Nothing is fetched from outside 127.0.0.1.

const PDF = Buffer.from('%PDF-1.7 synthetic invoice with a payload');
const PDF_SHA256 = createHash('sha256').update(PDF).digest('hex');
const EXE = Buffer.from('MZ synthetic dropper');
const EXE_MD5 = createHash('md5').update(EXE).digest('hex');
const MISP_KEY = 'misp-key-0123456789abcdef-never-shown';

const OPENPHISH = [
  'https://login-microsoftonline.phish.test/common/oauth2/',
  'http://paypal.account-verify.test/signin?session=1',
  'https://sites.example-hosting.test/view/secure-docs',
  '',
].join('\n');

const PHISHTANK_JSON = JSON.stringify([
  {
    phish_id: 8123001,
    url: 'https://bank-secure.phishtank-sample.test/Login.php',
    phish_detail_url: 'http://www.phishtank.com/phish_detail.php?phish_id=8123001',
    submission_time: '2024-05-01T08:00:00+00:00',
    verified: 'yes',
    verification_time: '2024-05-01T08:10:00+00:00',
    online: 'yes',
    details: [{ ip_address: '192.0.2.10', cidr_block: '192.0.2.0/24' }],
    target: 'Other',
  },
  {
    phish_id: 8123002,
    url: 'https://was-a-phish.test/gone',
    verified: 'yes',
    online: 'no',
    target: 'Other',
  },
]);

const PHISHTANK_CSV = [
  'phish_id,url,phish_detail_url,submission_time,verified,verification_time,online,target',
  '8123101,"https://wallet-unlock.csv-sample.test/a,b?id=7",http://www.phishtank.com/phish_detail.php?phish_id=8123101,2024-05-01T08:00:00+00:00,yes,2024-05-01T08:05:00+00:00,yes,Other',
  '',
].join('\n');

const URLHAUS = [
  '################################################################',
  '# abuse.ch URLhaus Database Dump (CSV - recent URLs only)      #',
  '# Last updated: 2024-05-01 10:00:00 (UTC)                      #',
  '#                                                              #',
  '# Terms Of Use: https://urlhaus.abuse.ch/api/                  #',
  '################################################################',
  '#',
  '# id,dateadded,url,url_status,last_online,threat,tags,urlhaus_link,reporter',
  '"2800001","2024-05-01 09:59:01","http://198.51.100.7:8080/bins/payload.sh","online","2024-05-01 09:59:01","malware_download","32-bit,elf,mips","https://urlhaus.abuse.ch/url/2800001/","sample_reporter"',
  '"2800002","2024-05-01 09:58:01","https://cdn.dropper.test/invoice.zip","online","2024-05-01 09:58:01","malware_download","zip","https://urlhaus.abuse.ch/url/2800002/","sample_reporter"',
  '',
].join('\r\n');

const EVENT_A = '5f0c3e2a-1111-4c6e-9a7d-0a1b2c3d4e5f';
const EVENT_B = '6a1d4f3b-2222-4d7f-8b8e-1b2c3d4e5f60';
const MANIFEST = {
  [EVENT_A]: {
    info: 'Credential phishing campaign (synthetic)',
    Orgc: { name: 'Test Org', uuid: '00000000-0000-4000-8000-000000000001' },
    analysis: 2,
    threat_level_id: 1,
    timestamp: '1714550000',
    date: '2024-05-01',
    published: true,
  },
  [EVENT_B]: { info: 'Malware (synthetic)', timestamp: '1714540000', date: '2024-05-01' },
};
const mispEvent = (uuid: string, attrs: object[], objects: object[] = []) =>
  JSON.stringify({
    Event: {
      uuid,
      info: 'synthetic',
      date: '2024-05-01',
      threat_level_id: '1',
      analysis: '2',
      Orgc: { name: 'Test Org' },
      Attribute: attrs,
      Object: objects,
    },
  });
const attr = (type: string, value: string, extra: object = {}) => ({
  uuid: '7b2e5a4c-3333-4e80-9c9f-2c3d4e5f6071',
  type,
  category: 'Network activity',
  value,
  to_ids: true,
  timestamp: '1714550000',
  ...extra,
});
const EVENTS: Record<string, string> = {
  [EVENT_A]: mispEvent(
    EVENT_A,
    [
      attr('domain', 'evil-corp-payroll.test'),
      attr('hostname', 'secure.mail-gateway.test'),
      attr('url', 'https://portal.misp-url.test/owa/auth.aspx'),
      attr('domain', 'not-for-detection.test', { to_ids: false }),
      attr('domain', 'deleted-one.test', { deleted: true }),
      attr('email-src', 'someone@misp-sender.test'),
    ],
    [
      {
        name: 'file',
        Attribute: [
          attr('filename|sha256', `invoice.pdf|${PDF_SHA256}`, { category: 'Payload delivery' }),
        ],
      },
    ],
  ),
  [EVENT_B]: mispEvent(EVENT_B, [attr('ip-dst', '203.0.113.66'), attr('md5', EXE_MD5)]),
};

/** The fake MISP instance's attributes (restSearch answers them a page at a time). */
const MISP_ATTRIBUTES = [
  attr('url', 'https://misp-api-hit.test/verify'),
  attr('domain', 'api-listed-domain.test'),
  attr('sha1', 'a'.repeat(40)),
];

interface State {
  mutable: { status: number; body: string };
  mispRequests: { auth: string | undefined; body: Record<string, unknown> }[];
  requests: string[];
}
const state: State = {
  mutable: { status: 200, body: 'https://first.mutable.test/a\n' },
  mispRequests: [],
  requests: [],
};

function handle(req: IncomingMessage, res: ServerResponse): true {
  const url = req.url ?? '/';
  state.requests.push(url);
  const send = (status: number, body: string | Buffer, type = 'text/plain') => {
    res.writeHead(status, { 'content-type': type });
    res.end(body);
    return true as const;
  };
  if (url === '/openphish/feed.txt') return send(200, OPENPHISH);
  if (url === '/phishtank/online-valid.json') return send(200, PHISHTANK_JSON, 'application/json');
  if (url === '/phishtank/online-valid.json.gz') return send(200, gzipSync(PHISHTANK_JSON));
  if (url === '/phishtank/online-valid.csv') return send(200, PHISHTANK_CSV, 'text/csv');
  if (url === '/urlhaus/csv_recent/') return send(200, URLHAUS);
  if (url === '/misp-feed/manifest.json') return send(200, JSON.stringify(MANIFEST));
  const ev = /^\/misp-feed\/([0-9a-f-]{36})\.json$/.exec(url)?.[1];
  if (ev && EVENTS[ev]) return send(200, EVENTS[ev], 'application/json');
  if (url === '/mutable.txt') return send(state.mutable.status, state.mutable.body);
  if (url === '/slow.txt') {
    // headers at once, then nothing: only a whole-download deadline ends this
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('https://slow.test/a\n');
    return true;
  }
  if (url === '/big-declared.txt') {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(10_000_000) });
    res.write('https://big.test/a\n');
    return true;
  }
  if (url === '/big-streamed.txt') {
    // no Content-Length: the limit must be counted while reading
    res.writeHead(200, { 'content-type': 'text/plain' });
    const line = `https://streamed.test/${'x'.repeat(80)}\n`;
    for (let i = 0; i < 2000; i++) res.write(line);
    res.end();
    return true;
  }
  if (url === '/misp/attributes/restSearch' && req.method === 'POST') {
    let raw = '';
    req.on('data', (c: Buffer) => {
      raw += c.toString('utf8');
    });
    req.on('end', () => {
      const body = JSON.parse(raw) as Record<string, unknown>;
      state.mispRequests.push({ auth: req.headers.authorization, body });
      if (req.headers.authorization !== MISP_KEY)
        return send(
          403,
          JSON.stringify({ name: 'Authentication failed.', message: 'Authentication failed.' }),
          'application/json',
        );
      const limit = Number(body.limit);
      const page = Number(body.page);
      const slice = MISP_ATTRIBUTES.slice((page - 1) * limit, page * limit).map((a, i) => ({
        id: String((page - 1) * limit + i + 1),
        event_id: '42',
        object_id: '0',
        distribution: '5',
        ...a,
        Event: { org_id: '1', distribution: '1', id: '42', info: 'synthetic', orgc_id: '1' },
      }));
      send(200, JSON.stringify({ response: { Attribute: slice } }), 'application/json');
    });
    return true;
  }
  return send(404, 'not found');
}

let server: Server;
let base = '';
const dir = mkdtempSync(join(tmpdir(), 'trawl-threat-intel-'));
const keyFile = join(dir, 'misp.key');
const badKeyFile = join(dir, 'bad.key');
const opened: ThreatIntel[] = [];

beforeAll(async () => {
  writeFileSync(keyFile, `${MISP_KEY}\n`);
  writeFileSync(badKeyFile, 'wrong-key\n');
  server = createServer(handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(() => {
  for (const i of opened.splice(0)) i.close();
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

function captureLog() {
  const lines: string[] = [];
  return {
    lines,
    log: {
      info: (o: object, m?: string) => lines.push(`${m} ${JSON.stringify(o)}`),
      warn: (o: object, m?: string) => lines.push(`${m} ${JSON.stringify(o)}`),
    },
  };
}

function intel(log = captureLog().log): ThreatIntel {
  const i = new ThreatIntel({ log });
  opened.push(i);
  return i;
}

function settings(raw: Record<string, unknown>): ThreatIntelSettings {
  return ThreatIntelSettings.parse(raw);
}

function email(opts: {
  text?: string;
  html?: string;
  attachments?: { filename: string; bytes: Buffer }[];
}): Email {
  const input: EmailInput = {
    headers: {
      subject: 'Your account',
      sender: 'alerts@sender.example',
      recipients: ['someone@example.org'],
      date: '2024-05-01T09:30:00Z',
    },
    body_text: opts.text ?? 'Hello',
    ...(opts.html ? { body_html: opts.html } : {}),
    ...(opts.attachments
      ? {
          attachments: opts.attachments.map((a) => ({
            filename: a.filename,
            content_type: 'application/octet-stream',
            content: a.bytes.toString('base64'),
          })),
        }
      : {}),
  };
  return Email.parse(input);
}

const ALL_FEEDS = () => [
  { name: 'openphish', format: 'openphish', source: `${base}/openphish/feed.txt` },
  { name: 'phishtank', format: 'phishtank', source: `${base}/phishtank/online-valid.json` },
  { name: 'phishtank-csv', format: 'phishtank', source: `${base}/phishtank/online-valid.csv` },
  { name: 'urlhaus', format: 'urlhaus', source: `${base}/urlhaus/csv_recent/` },
  { name: 'circl-osint', format: 'misp_feed', source: `${base}/misp-feed` },
];

describe('threat-intel provider with feeds in their published formats', () => {
  it('matches links, hosts, domains, IPs and attachment hashes, each with its feed; misses the rest', async () => {
    const ti = intel();
    ti.configure(settings({ feeds: ALL_FEEDS() }));
    await ti.idle();
    expect(ti.status().map((f) => [f.name, f.loaded, f.error])).toEqual([
      ['openphish', true, null],
      ['phishtank', true, null],
      ['phishtank-csv', true, null],
      ['urlhaus', true, null],
      ['circl-osint', true, null],
    ]);
    const m = email({
      text: [
        // scheme, case, default port, trailing slash and fragment differ from the feed's spelling
        'Sign in: HTTPS://Login-MicrosoftOnline.phish.test:443/common/oauth2#top',
        // the feed lists it without the per-recipient query
        'Verify https://bank-secure.phishtank-sample.test/Login.php?user=someone@example.org',
        'Wallet https://wallet-unlock.csv-sample.test/a,b?id=7',
        'Script http://198.51.100.7:8080/bins/payload.sh',
        'Portal https://portal.misp-url.test/owa/auth.aspx',
        'Payroll https://hr.evil-corp-payroll.test/form',
        'Mail https://secure.mail-gateway.test/inbox',
        'IP https://203.0.113.66/x',
        'Not listed: https://www.example.org/about and https://other.phish.test/common/oauth2',
        'Offline in PhishTank: https://was-a-phish.test/gone',
        'Not to_ids: https://not-for-detection.test/ deleted: https://deleted-one.test/',
        // a compromised site's one listed page does not list the site
        'Same site, other page: https://sites.example-hosting.test/view/other',
      ].join('\n'),
      attachments: [
        { filename: 'invoice.pdf', bytes: PDF },
        { filename: 'setup.exe', bytes: EXE },
        { filename: 'notes.txt', bytes: Buffer.from('harmless') },
      ],
    });
    const data = ti.enrich(m, 500);
    expect(data.available).toBe(true);
    expect(data.checked.attachments).toBe(3);
    const got = data.matches.map((x) => `${x.kind} ${x.value} [${x.feeds.join(',')}]`).sort();
    expect(got).toEqual([
      `attachment ${EXE_MD5} [circl-osint]`,
      `attachment ${PDF_SHA256} [circl-osint]`,
      'domain evil-corp-payroll.test [circl-osint]',
      'host secure.mail-gateway.test [circl-osint]',
      'ip 203.0.113.66 [circl-osint]',
      'url http://198.51.100.7:8080/bins/payload.sh [urlhaus]',
      'url https://bank-secure.phishtank-sample.test/Login.php?user=someone@example.org [phishtank]',
      'url https://login-microsoftonline.phish.test/common/oauth2#top [openphish]',
      'url https://portal.misp-url.test/owa/auth.aspx [circl-osint]',
      'url https://wallet-unlock.csv-sample.test/a,b?id=7 [phishtank-csv]',
    ]);
    expect(
      data.matches.find((x) => x.kind === 'attachment' && x.hash_type === 'md5')?.attachment,
    ).toBe('setup.exe');

    // a message with nothing listed, checked all the same
    const clean = ti.enrich(
      email({ text: 'See https://www.example.org/ and https://docs.example.net/a' }),
      500,
    );
    expect(clean).toMatchObject({ available: true, matches: [], checked: { urls: 2 } });
    // only the feeds were fetched, never a URL of a message
    expect(state.requests.every((r) => !r.includes('example.org') && !r.includes('oauth2'))).toBe(
      true,
    );
  });

  it('turns matches into indicators naming the feed, and symbols the scorer counts within the threat_intel cap', async () => {
    const ti = intel();
    const provider = createThreatIntelProvider({ intel: ti });
    const raw = { feeds: ALL_FEEDS() };
    const m = email({
      html: '<a href="https://portal.misp-url.test/owa/auth.aspx">Open your mailbox</a> <a href="https://hr.evil-corp-payroll.test/">HR</a>',
      attachments: [{ filename: 'invoice.pdf', bytes: PDF }],
    });
    const req = { email: m, stage: 'offline', workflow_id: 'default' };
    const first = await invokeProvider(provider, req, raw, AbortSignal.timeout(5000));
    expect(first.data).toMatchObject({ available: false, matches: [] }); // abstains: still loading
    await ti.idle();
    const answer = await invokeProvider(provider, req, raw, AbortSignal.timeout(5000));
    expect(answer.provider_id).toBe('threat-intel');
    const data = ThreatIntelData.parse(answer.data);
    expect(data.matches.map((x) => x.kind).sort()).toEqual(['attachment', 'domain', 'url']);

    const withContext = Email.parse({
      ...m,
      analysis_context: { offline: { providers: { 'threat-intel': answer.data }, analyzers: {} } },
    });
    const result = await invokeAnalyzer(intelAnalyzer, withContext, {}, AbortSignal.timeout(5000));
    expect(result.is_phishing).toBe(true);
    const values = result.indicators.map((i) => `${i.type}: ${i.value}`);
    expect(values).toContain(
      'threat_intel_url: link https://portal.misp-url.test/owa/auth.aspx listed by circl-osint',
    );
    expect(values).toContain(
      `threat_intel_attachment: attachment invoice.pdf (sha256 ${PDF_SHA256}) listed by circl-osint`,
    );
    expect(
      values.some((v) => v.startsWith('threat_intel_domain: link domain evil-corp-payroll.test')),
    ).toBe(true);
    expect(result.analyzer_details).toMatchObject({
      symbols: expect.arrayContaining(['url_listed', 'domain_listed', 'attachment_listed']),
      scores: { url_listed: 4, domain_listed: 3, attachment_listed: 5 },
      groups: { url_listed: 'threat_intel', attachment_listed: 'threat_intel' },
    });

    // the scorer adds 4 + 3 + 5 = 12 but the group counts at most 6
    const score = ensembleScore(
      {
        offline: {
          providers: {},
          analyzers: {
            intel: {
              analyzer_id: 'intel',
              status: 'success',
              attempts: 1,
              duration_ms: 1,
              ...result,
              threat_level: 'high',
            },
          },
        },
      },
      { bias: -3, symbols: {}, groups: {}, types: {} },
      { stages: [], maxLogOdds: 12 },
    );
    expect(score.groups.threat_intel).toEqual({ sum: 12, counted: 6 });
    expect(score.probability).toBeGreaterThan(0.9);

    // without the provider's data the analyzer abstains
    const none = await invokeAnalyzer(intelAnalyzer, m, {}, AbortSignal.timeout(5000));
    expect(none).toMatchObject({ is_phishing: false, indicators: [] });
    expect(none.analyzer_details).toMatchObject({ available: false, symbols: [] });
  });

  it('reads a gzip dump', async () => {
    const ti = intel();
    ti.configure(
      settings({
        feeds: [
          { name: 'pt', format: 'phishtank', source: `${base}/phishtank/online-valid.json.gz` },
        ],
      }),
    );
    await ti.idle();
    expect(ti.status()[0]).toMatchObject({ loaded: true, entries: 1 });
  });

  it('loads feed files from disk too', async () => {
    const feedDir = join(dir, 'misp-feed');
    mkdirSync(feedDir, { recursive: true });
    writeFileSync(join(feedDir, 'manifest.json'), JSON.stringify(MANIFEST));
    for (const [uuid, text] of Object.entries(EVENTS))
      writeFileSync(join(feedDir, `${uuid}.json`), text);
    writeFileSync(join(dir, 'openphish.txt'), OPENPHISH);
    const ti = intel();
    ti.configure(
      settings({
        feeds: [
          { name: 'local-misp', format: 'misp_feed', source: feedDir },
          { name: 'local-openphish', format: 'openphish', source: join(dir, 'openphish.txt') },
        ],
      }),
    );
    await ti.idle();
    expect(ti.status().map((f) => [f.name, f.loaded])).toEqual([
      ['local-misp', true],
      ['local-openphish', true],
    ]);
    const d = ti.enrich(
      email({ text: 'https://paypal.account-verify.test/signin?session=1' }),
      500,
    );
    expect(d.matches).toMatchObject([{ kind: 'url', feeds: ['local-openphish'] }]);
  });
});

describe('threat-intel loading', () => {
  const mutable = () => ({
    feeds: [{ name: 'mutable', format: 'url_list', source: `${base}/mutable.txt` }],
  });
  const hits = (ti: ThreatIntel, url: string) =>
    ti.enrich(email({ text: url }), 500).matches.length > 0;

  it('reloads a feed whole: new entries in, removed entries out', async () => {
    state.mutable = { status: 200, body: 'https://first.mutable.test/a\n' };
    const ti = intel();
    ti.configure(settings(mutable()));
    await ti.idle();
    expect(hits(ti, 'https://first.mutable.test/a')).toBe(true);
    state.mutable = { status: 200, body: '# v2\nhttps://second.mutable.test/b\n' };
    await ti.refreshNow();
    expect(hits(ti, 'https://second.mutable.test/b')).toBe(true);
    expect(hits(ti, 'https://first.mutable.test/a')).toBe(false);
  });

  it('reloads on its schedule (refresh_seconds)', async () => {
    state.mutable = { status: 200, body: 'https://before.schedule.test/\n' };
    const ti = intel();
    ti.configure(settings({ ...mutable(), refresh_seconds: 1 }));
    await ti.idle();
    state.mutable = { status: 200, body: 'https://after.schedule.test/\n' };
    const deadline = Date.now() + 5000;
    while (!hits(ti, 'https://after.schedule.test/') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    expect(hits(ti, 'https://after.schedule.test/')).toBe(true);
  });

  it('keeps the last good copy when a reload fails, and reports why', async () => {
    state.mutable = { status: 200, body: 'https://kept.mutable.test/a\n' };
    const { lines, log } = captureLog();
    const ti = intel(log);
    ti.configure(settings(mutable()));
    await ti.idle();
    for (const broken of [
      { status: 500, body: 'oops' },
      { status: 200, body: '<html><body>Service temporarily unavailable</body></html>' },
    ]) {
      state.mutable = broken;
      await ti.refreshNow();
      expect(hits(ti, 'https://kept.mutable.test/a')).toBe(true);
      const s = ti.status()[0];
      expect(s?.loaded).toBe(true);
      expect(s?.error?.code).toBe(
        broken.status === 500
          ? THREAT_INTEL_ERROR_CODES.unavailable
          : THREAT_INTEL_ERROR_CODES.invalid,
      );
    }
    expect(lines.some((l) => l.includes('keeping its last good copy'))).toBe(true);
    state.mutable = { status: 200, body: 'https://kept.mutable.test/a\n' };
    await ti.refreshNow();
    expect(ti.status()[0]?.error).toBeNull();
  });

  it('abstains until a first load succeeds, without waiting for the download', async () => {
    const ti = intel();
    const provider = createThreatIntelProvider({ intel: ti });
    const raw = {
      feeds: [{ name: 'slow', format: 'openphish', source: `${base}/slow.txt` }],
      fetch_timeout_ms: 400,
    };
    const started = Date.now();
    const answer = await invokeProvider(
      provider,
      { email: email({ text: 'https://slow.test/a' }), stage: 's', workflow_id: 'w' },
      raw,
      AbortSignal.timeout(5000),
    );
    expect(Date.now() - started).toBeLessThan(200);
    expect(answer.data).toMatchObject({ available: false, matches: [] });
    await ti.idle();
    // the whole-download deadline ends a feed that never finishes
    expect(ti.status()[0]).toMatchObject({
      loaded: false,
      error: { code: THREAT_INTEL_ERROR_CODES.timeout },
    });
  });

  it('refuses a feed over max_feed_bytes, declared or streamed', async () => {
    writeFileSync(join(dir, 'big.txt'), 'https://file.test/x\n'.repeat(10_000));
    const ti = intel();
    ti.configure(
      settings({
        feeds: [
          { name: 'declared', format: 'url_list', source: `${base}/big-declared.txt` },
          { name: 'streamed', format: 'url_list', source: `${base}/big-streamed.txt` },
          { name: 'file', format: 'url_list', source: join(dir, 'big.txt') },
        ],
        max_feed_bytes: 64 * 1024,
        fetch_timeout_ms: 5000,
      }),
    );
    await ti.idle();
    for (const s of ti.status()) {
      expect(s.loaded, s.name).toBe(false);
      expect(s.error?.code, s.name).toBe(THREAT_INTEL_ERROR_CODES.tooLarge);
    }
  });
});

describe('threat-intel with a MISP instance (restSearch)', () => {
  it('pulls attributes page by page with the key in Authorization, and never shows the key', async () => {
    state.mispRequests = [];
    const { lines, log } = captureLog();
    const ti = intel(log);
    ti.configure(
      settings({
        misp: { url: `${base}/misp`, api_key_file: keyFile, page_size: 2, last: '14d' },
      }),
    );
    await ti.idle();
    expect(ti.status()[0]).toMatchObject({
      name: 'misp',
      format: 'misp_api',
      loaded: true,
      entries: 3,
    });
    expect(state.mispRequests).toHaveLength(2);
    expect(state.mispRequests[0]).toEqual({
      auth: MISP_KEY,
      body: expect.objectContaining({
        returnFormat: 'json',
        limit: 2,
        page: 1,
        last: '14d',
        to_ids: true,
        type: expect.arrayContaining(['url', 'domain', 'sha256', 'ip-dst']),
      }),
    });
    expect(state.mispRequests[1]?.body.page).toBe(2);
    const d = ti.enrich(
      email({ text: 'https://misp-api-hit.test/verify and https://www.api-listed-domain.test/' }),
      500,
    );
    expect(d.matches.map((x) => `${x.kind} ${x.feeds.join()}`).sort()).toEqual([
      'domain misp',
      'url misp',
    ]);
    const shown = JSON.stringify([d, ti.status(), lines]);
    expect(shown).not.toContain(MISP_KEY);
  });

  it('reports a refused key without showing either key', async () => {
    const { lines, log } = captureLog();
    const ti = intel(log);
    ti.configure(settings({ misp: { url: `${base}/misp`, api_key_file: badKeyFile } }));
    await ti.idle();
    expect(ti.status()[0]).toMatchObject({
      loaded: false,
      error: { code: THREAT_INTEL_ERROR_CODES.mispRejected },
    });
    const shown = JSON.stringify([ti.status(), lines]);
    expect(shown).not.toContain('wrong-key');
    expect(shown).not.toContain(MISP_KEY);
  });
});

import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type CliIo, EXIT, formatJob, run } from '../../src/index.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A fake server: answers from a routing function; records the requests. */
function harness(route: (req: Request) => Response | Promise<Response>) {
  const home = mkdtempSync(join(tmpdir(), 'trawl-cli-'));
  dirs.push(home);
  const out: string[] = [];
  const err: string[] = [];
  const requests: Request[] = [];
  const io: CliIo = {
    env: { XDG_CONFIG_HOME: home },
    stdout: { write: (s: string) => out.push(s) },
    stderr: { write: (s: string) => err.push(s) },
    readStdin: async () => Buffer.from('s3cret\n'),
    readFile: async () => Buffer.from('From: a@b.example\r\n\r\nhello'),
    cwd: home,
    fetch: (async (input: string | URL | Request, init?: RequestInit) => {
      const req = new Request(input, init);
      requests.push(req.clone());
      return route(req);
    }) as typeof fetch,
    sleep: async () => {},
  };
  return { io, out, err, requests, home };
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

const completed = {
  job_id: '6f1c0d2e-8a3b-4c5d-9e0f-112233445566',
  email_id: 'e1',
  status: 'completed',
  workflow: 'default',
  created_at: '2025-01-01T00:00:00.000Z',
  result: {
    is_phishing: true,
    threat_level: 'high',
    confidence: 0.87,
    summary: 'phishing: brand impersonation',
    recommended_action: 'quarantine',
    indicators: [
      { type: 'domain_spoofing', value: 'paypa1.example imitates paypal', confidence: 0.9 },
      { type: 'urgency_language', value: 'act within 24 hours', confidence: 0.6 },
    ],
  },
};

describe('trawl command line', () => {
  it('prints usage and exits 2 without a command', async () => {
    const h = harness(() => json({}));
    expect(await run([], h.io)).toBe(EXIT.usage);
    expect(h.out.join('')).toContain('usage: trawl');
  });

  it('exits 2 on an unknown option', async () => {
    const h = harness(() => json({}));
    expect(await run(['jobs', '--nope'], h.io)).toBe(EXIT.usage);
  });

  it('exits 3 when not logged in', async () => {
    const h = harness(() => json({}));
    expect(await run(['jobs'], h.io)).toBe(EXIT.auth);
    expect(h.err.join('')).toContain('trawl login');
  });

  it('logs in with --password-stdin and keeps the token in a 0600 file', async () => {
    const h = harness((req) => {
      if (new URL(req.url).pathname === '/auth/token')
        return json({ access_token: 'A1', refresh_token: 'R1', expires_in: 1800 });
      return json({}, 404);
    });
    const code = await run(
      ['login', '--url', 'http://t.example:1', '--user', 'admin', '--password-stdin'],
      h.io,
    );
    expect(code).toBe(EXIT.ok);
    const body = await h.requests[0]?.text();
    expect(body).toContain('grant_type=password');
    expect(body).toContain('password=s3cret');
    const file = join(h.home, 'trawl', 'credentials.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const creds = JSON.parse(readFileSync(file, 'utf8'));
    expect(creds.current).toBe('http://t.example:1');
    expect(creds.sessions['http://t.example:1'].refresh_token).toBe('R1');
  });

  it('refreshes an expired access token once and retries', async () => {
    let token = 'old';
    const h = harness((req) => {
      const path = new URL(req.url).pathname;
      if (path === '/auth/token') return json({ access_token: 'old', refresh_token: 'R1' });
      if (path === '/auth/refresh') {
        token = 'new';
        return json({ access_token: 'new', refresh_token: 'R2' });
      }
      if (req.headers.get('authorization') !== `Bearer ${token}` || token === 'old')
        return json({ title: 'Unauthorized', code: 'TRAWL_ERR_TOKEN_EXPIRED' }, 401);
      return json({ items: [completed], next_cursor: null });
    });
    await run(['login', '--url', 'http://t.example:1', '--user', 'a', '--password-stdin'], h.io);
    const code = await run(['jobs', '--json'], h.io);
    expect(code).toBe(EXIT.ok);
    expect(JSON.parse(h.out.at(-1) ?? '{}').items[0].job_id).toBe(completed.job_id);
    expect(h.requests.map((r) => new URL(r.url).pathname)).toEqual([
      '/auth/token',
      '/api/v1/analyze',
      '/auth/refresh',
      '/api/v1/analyze',
    ]);
  });

  it('analyze --wait sends message/rfc822, polls, and exits 10 on a phishing verdict', async () => {
    let polls = 0;
    const h = harness((req) => {
      const u = new URL(req.url);
      if (u.pathname === '/auth/token') return json({ access_token: 'A', refresh_token: 'R' });
      if (u.pathname === '/api/v1/analyze/raw') {
        expect(req.headers.get('content-type')).toBe('message/rfc822');
        expect(u.searchParams.get('workflow_id')).toBe('fast');
        return json({
          job_id: completed.job_id,
          email_id: 'e1',
          status: 'queued',
          workflow: 'fast',
          message: '',
        });
      }
      polls++;
      return json(
        polls < 3 ? { ...completed, status: 'processing', result: undefined } : completed,
      );
    });
    await run(['login', '--url', 'http://t.example:1', '--user', 'a', '--password-stdin'], h.io);
    const code = await run(['analyze', 'm.eml', '--workflow', 'fast', '--wait'], h.io);
    expect(code).toBe(EXIT.phishing);
    const text = h.out.join('');
    expect(text).toContain('PHISHING');
    expect(text).toContain('87%');
    expect(text).toContain('quarantine');
    expect(text).toContain('domain_spoofing');
  });

  it('turns problem details into a message and exit 1', async () => {
    const h = harness((req) => {
      if (new URL(req.url).pathname === '/auth/token') return json({ access_token: 'A' });
      return json(
        { title: 'Not Found', detail: 'job x', status: 404, code: 'TRAWL_ERR_NOT_FOUND' },
        404,
      );
    });
    await run(['login', '--url', 'http://t.example:1', '--user', 'a', '--password-stdin'], h.io);
    expect(await run(['job', 'x'], h.io)).toBe(EXIT.error);
    expect(h.err.join('')).toContain('TRAWL_ERR_NOT_FOUND');
  });
});

describe('formatJob', () => {
  it('shows the verdict, confidence, threat, action and top indicators, highest first', () => {
    const text = formatJob(completed, { indicators: 1 });
    expect(text).toMatch(/verdict\s+PHISHING/);
    expect(text).toMatch(/threat\s+high/);
    expect(text).toContain('domain_spoofing');
    expect(text).not.toContain('urgency_language');
    expect(text).toContain('1 more');
  });
});

describe('job search and evidence', () => {
  it('jobs: filter flags become query parameters, and the next-page hint keeps them', async () => {
    const h = harness((req) => {
      if (new URL(req.url).pathname === '/auth/token') return json({ access_token: 'A' });
      return json({ items: [completed], next_cursor: 'CUR1' });
    });
    await run(['login', '--url', 'http://t.example:1', '--user', 'a', '--password-stdin'], h.io);
    const code = await run(
      [
        'jobs',
        '--phishing',
        '--sender',
        'bank.example',
        '--subject',
        'account locked',
        '--url-domain',
        't.co',
        '--since',
        '2026-11-01',
        '--limit',
        '5',
      ],
      h.io,
    );
    expect(code).toBe(EXIT.ok);
    const q = new URL(h.requests.at(-1)?.url ?? '').searchParams;
    expect(Object.fromEntries(q)).toEqual({
      is_phishing: 'true',
      sender: 'bank.example',
      subject: 'account locked',
      url_domain: 't.co',
      since: '2026-11-01',
      limit: '5',
    });
    expect(h.err.join('')).toContain(
      "more: trawl jobs --phishing --sender bank.example --subject 'account locked' --url-domain t.co --since 2026-11-01 --limit 5 --cursor CUR1",
    );
  });

  it('job: shows the evidence and what each indicator is about', () => {
    const text = formatJob(
      {
        ...completed,
        result: {
          ...completed.result,
          indicators: [
            {
              type: 'url_shortener',
              value: 'shortened link via t.co',
              confidence: 0.5,
              evidence: { kind: 'url', index: 0 },
            },
          ],
          evidence: {
            message: {
              subject: 'Your account is locked',
              from: { address: 'x@bank.example', display_name: 'Bank' },
              reply_to: ['drop@else.example'],
              to: ['alice@corp.example'],
              cc: [],
              bcc: [],
              date: '2026-11-03T10:00:00Z',
            },
            received: {
              sending_ip: '203.0.113.9',
              hops: [{ from: 'a.example', by: 'mx.corp.example' }],
            },
            auth: {
              spf: 'fail',
              dkim: 'none',
              dmarc: 'fail',
              arc: 'none_seen',
              dkim_pass_domains: [],
              authserv_id: 'mx.corp.example',
              via_arc: false,
              verified: true,
            },
            urls: [
              {
                url: 'https://t.co/x',
                decoded: 'https://t.co/x',
                host: 't.co',
                registrable_domain: 't.co',
                text: 'Verify',
                found_in: 'html',
                element: 'href',
              },
            ],
            attachments: [
              {
                filename: 'docs.zip',
                declared_type: 'application/zip',
                sniffed_type: 'application/zip',
                size: 10,
                sha256: 'a'.repeat(64),
                contents: ['invoice.pdf.exe'],
              },
            ],
          },
        },
      },
      { evidence: true },
    );
    expect(text).toContain('shortened link via t.co  [url #1 t.co]');
    expect(text).toMatch(/reply-to\s+drop@else\.example/);
    expect(text).toMatch(/sending ip\s+203\.0\.113\.9/);
    expect(text).toContain('spf=fail dkim=none dmarc=fail');
    expect(text).toContain('shown as “Verify”');
    expect(text).toContain('contains invoice.pdf.exe');
    expect(text).toContain(`sha256 ${'a'.repeat(64)}`);
  });
});

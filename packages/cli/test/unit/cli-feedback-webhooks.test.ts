import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type CliIo, EXIT, run } from '../../src/index.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

function harness(route: (req: Request) => Response | Promise<Response>) {
  const home = mkdtempSync(join(tmpdir(), 'trawl-cli-fb-'));
  dirs.push(home);
  const out: string[] = [];
  const err: string[] = [];
  const requests: { method: string; url: URL; body: string }[] = [];
  const io: CliIo = {
    env: { XDG_CONFIG_HOME: home },
    stdout: { write: (s: string) => out.push(s) },
    stderr: { write: (s: string) => err.push(s) },
    readStdin: async () => Buffer.from('s3cret\n'),
    readFile: async () => Buffer.from(''),
    cwd: home,
    fetch: (async (input: string | URL | Request, init?: RequestInit) => {
      const req = new Request(input, init);
      const u = new URL(req.url);
      if (u.pathname === '/auth/token') return json({ access_token: 'A', refresh_token: 'R' });
      requests.push({ method: req.method, url: u, body: await req.clone().text() });
      return route(req);
    }) as typeof fetch,
    sleep: async () => {},
  };
  const login = () =>
    run(['login', '--url', 'http://t.example:1', '--user', 'a', '--password-stdin'], io);
  return { io, out, err, requests, login };
}

const JOB = '6f1c1f7e-2b1a-4c1e-9d7a-3c9b8e2f4a10';
const HOOK = '0b7f3e2a-1c4d-4e5f-8a9b-0c1d2e3f4a5b';

describe('trawl learn --forget (issue 28)', () => {
  it("asks the gateway to forget the user's labels and prints what changed", async () => {
    const h = harness(() => json({ user: 'eve', jobs: 4, changed: 1 }));
    await h.login();
    const code = await run(['learn', '--forget', 'eve'], h.io);
    expect(code).toBe(EXIT.ok);
    expect(h.requests[0]?.method).toBe('POST');
    expect(h.requests[0]?.url.pathname).toBe('/api/v1/feedback/teachers/eve/forget');
    expect(h.out.join('')).toContain('4 jobs decided again, 1 changed');
  });
});

describe('trawl feedback', () => {
  it('posts the verdict and the note, and says what it replaced', async () => {
    const h = harness(() =>
      json({
        job_id: JOB,
        feedback: { verdict: 'legitimate', note: 'newsletter', by: 'a', at: 'now' },
        previous: { verdict: 'phishing' },
        learning: 'learned',
      }),
    );
    await h.login();
    const code = await run(['feedback', JOB, 'legitimate', '--note', 'newsletter'], h.io);
    expect(code).toBe(EXIT.ok);
    expect(h.requests[0]?.method).toBe('POST');
    expect(h.requests[0]?.url.pathname).toBe(`/api/v1/analyze/${JOB}/feedback`);
    expect(JSON.parse(h.requests[0]?.body ?? '')).toEqual({
      verdict: 'legitimate',
      note: 'newsletter',
    });
    expect(h.out.join('')).toContain('legitimate (was phishing); classifier: learned');
  });

  it('refuses a verdict other than phishing or legitimate without asking the server', async () => {
    const h = harness(() => json({}));
    await h.login();
    expect(await run(['feedback', JOB, 'spam'], h.io)).toBe(EXIT.usage);
    expect(h.requests).toHaveLength(0);
    expect(await run(['feedback', JOB], h.io)).toBe(EXIT.usage);
  });
});

describe('trawl webhooks', () => {
  const hook = {
    id: HOOK,
    url: 'https://soar.example/hook',
    events: ['job.completed', 'verdict.phishing'],
    enabled: true,
    disabled_reason: null,
    description: null,
  };

  it('add sends the events and shows the secret once; list shows no secret', async () => {
    const h = harness((req) =>
      req.method === 'POST'
        ? json({ ...hook, secret: 'whsec_c2VjcmV0' }, 201)
        : json({ items: [hook] }),
    );
    await h.login();
    const code = await run(
      ['webhooks', 'add', hook.url, '--event', 'job.completed', '--event', 'verdict.phishing'],
      h.io,
    );
    expect(code).toBe(EXIT.ok);
    expect(JSON.parse(h.requests[0]?.body ?? '')).toEqual({
      url: hook.url,
      events: ['job.completed', 'verdict.phishing'],
    });
    expect(h.out.join('')).toContain('secret: whsec_c2VjcmV0');
    h.out.length = 0;
    expect(await run(['webhooks', 'list'], h.io)).toBe(EXIT.ok);
    expect(h.out.join('')).toContain(`${HOOK} enabled`);
    expect(h.out.join('')).not.toContain('whsec_');
    expect(await run(['webhooks', 'add', hook.url], h.io)).toBe(EXIT.usage);
  });

  it('deliveries shows each attempt; rm deletes', async () => {
    const h = harness((req) =>
      req.method === 'DELETE'
        ? new Response(null, { status: 204 })
        : json({
            items: [
              {
                at: '2026-11-27T03:00:01.000Z',
                event_id: 'msg_1',
                event_type: 'job.completed',
                attempt: 2,
                status_code: 200,
                error: null,
                duration_ms: 3,
                delivery_status: 'delivered',
              },
              {
                at: '2026-11-27T03:00:00.000Z',
                event_id: 'msg_1',
                event_type: 'job.completed',
                attempt: 1,
                status_code: 500,
                error: 'HTTP 500: down',
                duration_ms: 3,
                delivery_status: 'delivered',
              },
            ],
            next_cursor: null,
          }),
    );
    await h.login();
    expect(await run(['webhooks', 'deliveries', HOOK, '--limit', '5'], h.io)).toBe(EXIT.ok);
    expect(h.requests[0]?.url.pathname).toBe(`/api/v1/webhooks/${HOOK}/deliveries`);
    expect(h.requests[0]?.url.searchParams.get('limit')).toBe('5');
    const text = h.out.join('');
    expect(text).toContain('HTTP 500: down');
    expect(text).toMatch(/msg_1\s+job\.completed\s+2\s+200/);
    expect(await run(['webhooks', 'rm', HOOK], h.io)).toBe(EXIT.ok);
    expect(h.requests[1]).toMatchObject({ method: 'DELETE' });
  });
});

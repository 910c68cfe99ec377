import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type CliIo, EXIT, formatJob, run } from '../../src/index.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A fake server: answers from a routing function; records the requests. */
function harness(route: (req: Request) => Response) {
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
    readFile: async () => Buffer.from(''),
    cwd: home,
    fetch: (async (input: string | URL | Request, init?: RequestInit) => {
      const req = new Request(input, init);
      requests.push(req.clone());
      return route(req);
    }) as typeof fetch,
    sleep: async () => {},
  };
  return { io, out, err, requests };
}

const json = (body: unknown) =>
  new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } });

const ID = 'dc07f815-4f5d-438c-9afb-23ad182c130b';
const campaign = {
  id: ID,
  size: 3,
  recipients: 3,
  reporters: 1,
  subject: 'Action required: your mailbox is full',
  lures: ['domain', 'text'],
  first_seen: '2026-11-27T03:37:22.386Z',
  last_seen: '2026-11-27T03:37:34.321Z',
};

describe('trawl campaigns', () => {
  async function loggedIn(route: (req: Request) => Response) {
    const h = harness((req) =>
      new URL(req.url).pathname === '/auth/token' ? json({ access_token: 'A' }) : route(req),
    );
    await run(['login', '--url', 'http://t.example:1', '--user', 'a', '--password-stdin'], h.io);
    return h;
  }

  it('lists campaigns with their counts, and prints the next page command', async () => {
    const h = await loggedIn(() => json({ items: [campaign], next_cursor: 'CUR' }));
    expect(await run(['campaigns', '--limit', '5'], h.io)).toBe(EXIT.ok);
    const req = new URL(h.requests.at(-1)?.url ?? '');
    expect(req.pathname).toBe('/api/v1/campaigns');
    expect(Object.fromEntries(req.searchParams)).toEqual({ limit: '5' });
    const text = h.out.join('');
    expect(text).toContain(ID);
    expect(text).toMatch(/3\s+3\s+1\s+domain,text\s+Action required/);
    expect(h.err.join('')).toContain('more: trawl campaigns --cursor CUR');
  });

  it('shows one campaign: members with recipients, verdicts and what they matched', async () => {
    const h = await loggedIn(() =>
      json({
        ...campaign,
        members: [
          {
            job_id: '480c6a21-35ed-48bf-b139-f73febbc6aa8',
            created_at: '2026-11-27T03:37:21.990Z',
            joined_at: '2026-11-27T03:37:22.386Z',
            matched: 'domain:mail-quota-verify.example',
            status: 'completed',
            sender: 'admin@corp-mail.example',
            recipients: ['bob@corp.example'],
            reporter: 'carol@corp.example',
            is_phishing: true,
            threat_level: 'critical',
          },
        ],
        next_cursor: null,
      }),
    );
    expect(await run(['campaigns', ID], h.io)).toBe(EXIT.ok);
    expect(new URL(h.requests.at(-1)?.url ?? '').pathname).toBe(`/api/v1/campaigns/${ID}`);
    const text = h.out.join('');
    expect(text).toContain('reached    3 message(s), 3 recipient(s), 1 reporter(s)');
    expect(text).toContain('bob@corp.example (reported by carol@corp.example)');
    expect(text).toContain('domain:mail-quota-verify.example');
    expect(text).toContain('phishing critical');
    expect(h.err.join('')).toContain(`trawl jobs --campaign ${ID}`);
  });

  it('jobs --campaign filters the search', async () => {
    const h = await loggedIn(() => json({ items: [], next_cursor: null }));
    expect(await run(['jobs', '--campaign', ID], h.io)).toBe(EXIT.ok);
    expect(new URL(h.requests.at(-1)?.url ?? '').searchParams.get('campaign')).toBe(ID);
  });

  it('job shows the campaign of a job', () => {
    const text = formatJob({
      job_id: '480c6a21-35ed-48bf-b139-f73febbc6aa8',
      status: 'completed',
      campaign: { id: ID, size: 3, recipients: 3, reporters: 0 },
    });
    expect(text).toContain(`campaign    ${ID}: 3 message(s), 3 recipient(s), 0 reporter(s)`);
  });
});

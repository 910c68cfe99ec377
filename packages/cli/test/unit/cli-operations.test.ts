import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type CliIo, EXIT, formatJob, run } from '../../src/index.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function harness(route: (req: Request) => Response | Promise<Response>) {
  const home = mkdtempSync(join(tmpdir(), 'trawl-cli-ops-'));
  dirs.push(home);
  const out: string[] = [];
  const err: string[] = [];
  const requests: Request[] = [];
  const io: CliIo = {
    env: { XDG_CONFIG_HOME: home },
    stdout: { write: (s: string) => out.push(s) },
    stderr: { write: (s: string) => err.push(s) },
    readStdin: async () => Buffer.from('s3cret\n'),
    readFile: async (p: string) => {
      if (p.endsWith('missing.eml')) throw Object.assign(new Error('nope'), { code: 'ENOENT' });
      return Buffer.from(`From: a@b.example\r\nSubject: ${p}\r\n\r\nhello`);
    },
    cwd: home,
    fetch: (async (input: string | URL | Request, init?: RequestInit) => {
      const req = new Request(input, init);
      requests.push(req.clone());
      const u = new URL(req.url);
      if (u.pathname === '/auth/token') return json({ access_token: 'A', refresh_token: 'R' });
      return route(req);
    }) as typeof fetch,
    sleep: async () => {},
  };
  const login = () =>
    run(['login', '--url', 'http://t.example:1', '--user', 'a', '--password-stdin'], io);
  return { io, out, err, requests, login };
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

const result = (is_phishing: boolean) => ({
  is_phishing,
  threat_level: is_phishing ? 'high' : 'none',
  confidence: 0.9,
  summary: '',
  recommended_action: is_phishing ? 'quarantine' : 'deliver',
  indicators: [],
});

describe('trawl job: the disabled LLM stage (showed "completed 1 ms" while the JSON said it failed)', () => {
  it('reads "no result" and shows the failed call with its error', () => {
    const text = formatJob({
      job_id: 'j',
      status: 'completed',
      trace: {
        duration_ms: 40,
        stages: [
          {
            name: 'score',
            status: 'completed',
            duration_ms: 12,
            analyzers: [{ id: 'scorer', status: 'success', attempts: 1, duration_ms: 11 }],
            providers: [],
            result: { is_phishing: false },
          },
          {
            name: 'llm',
            status: 'completed',
            duration_ms: 1,
            analyzers: [
              {
                id: 'llm',
                status: 'failed',
                attempts: 1,
                duration_ms: 0,
                error: 'llm is not configured',
              },
            ],
            providers: [],
          },
          {
            name: 'extra',
            status: 'skipped',
            duration_ms: 0,
            condition: 'condition is false',
            analyzers: [],
            providers: [],
          },
        ],
      },
    });
    expect(text).toMatch(/ {2}score {16}completed {2}12 ms\n/);
    expect(text).toMatch(
      / {2}llm {18}no result {2}1 ms\n {4}analyzer llm {12}failed {3}0 ms {2}llm is not configured\n/,
    );
    expect(text).toMatch(/ {2}extra {16}skipped {4}0 ms {2}condition is false/);
    expect(text).not.toMatch(/llm +completed/);
  });
});

describe('trawl analyze with several files (was refused)', () => {
  it('submits each, waits, prints a summary table and exits 10 when one is phishing', async () => {
    let n = 0;
    const ids = new Map<string, string>();
    const h = harness((req) => {
      const u = new URL(req.url);
      if (u.pathname === '/api/v1/analyze/raw') {
        const id = `00000000-0000-4000-8000-00000000000${++n}`;
        ids.set(id, n === 1 ? 'clean' : 'phish');
        return json({
          job_id: id,
          email_id: 'e',
          status: 'queued',
          workflow: 'default',
          message: '',
        });
      }
      const id = u.pathname.split('/').pop() as string;
      return json({ job_id: id, status: 'completed', result: result(ids.get(id) === 'phish') });
    });
    await h.login();
    h.out.length = 0;
    const code = await run(['analyze', 'a.eml', 'b.eml', '--wait'], h.io);
    expect(code).toBe(EXIT.phishing);
    const lines = h.out.join('').trimEnd().split('\n');
    // file, subject, verdict, phishing probability, action (issue 16), then the job to look at
    expect(lines[0]).toMatch(/^FILE +SUBJECT +VERDICT +PROB +ACTION +JOB$/);
    expect(lines[1]).toMatch(
      /^a\.eml +not phishing +10% +deliver +00000000-0000-4000-8000-000000000001$/,
    );
    expect(lines[2]).toMatch(
      /^b\.eml +PHISHING +90% +quarantine +00000000-0000-4000-8000-000000000002$/,
    );
    expect(lines[3]).toBe('2 message(s): 1 phishing, 1 not phishing, 0 without a verdict');
  });

  it('reports a file it cannot read in its row, goes on with the others, and exits 1', async () => {
    const h = harness((req) => {
      const u = new URL(req.url);
      if (u.pathname === '/api/v1/analyze/raw')
        return json({
          job_id: 'j1',
          email_id: 'e',
          status: 'queued',
          workflow: 'default',
          message: '',
        });
      return json({});
    });
    await h.login();
    h.out.length = 0;
    const code = await run(['analyze', 'missing.eml', 'b.eml', '--json'], h.io);
    expect(code).toBe(EXIT.error);
    const body = JSON.parse(h.out.join('')) as { items: Array<Record<string, unknown>> };
    expect(body.items.map((i) => [i.file, i.status])).toEqual([
      ['missing.eml', 'error'],
      ['b.eml', 'queued'],
    ]);
    expect(String(body.items[0]?.error)).toMatch(/ENOENT/);
  });
});

describe('trawl users', () => {
  it('list prints a header row (it had none)', async () => {
    const h = harness(() =>
      json({
        items: [
          {
            username: 'admin',
            roles: ['admin'],
            disabled: false,
            created_at: '2026-01-01T00:00:00Z',
          },
          {
            username: 'bob',
            roles: ['viewer'],
            disabled: true,
            created_at: '2026-01-02T00:00:00Z',
          },
        ],
      }),
    );
    await h.login();
    h.out.length = 0;
    expect(await run(['users', 'list'], h.io)).toBe(EXIT.ok);
    const lines = h.out.join('').trimEnd().split('\n');
    expect(lines[0]).toMatch(/^USER +ROLES +STATE +CREATED$/);
    expect(lines[2]).toMatch(/^bob +viewer +disabled 2026-01-02/);
  });

  it('disable <name> sends PATCH {disabled: true}', async () => {
    const h = harness(async (req) => {
      expect(req.method).toBe('PATCH');
      expect(new URL(req.url).pathname).toBe('/api/v1/users/bob');
      expect(await req.json()).toEqual({ disabled: true });
      return json({ username: 'bob', roles: ['viewer'], disabled: true, created_at: 'x' });
    });
    await h.login();
    h.out.length = 0;
    expect(await run(['users', 'disable', 'bob'], h.io)).toBe(EXIT.ok);
    expect(h.out.join('')).toBe('bob is disabled\n');
  });
});

describe('trawl audit', () => {
  it('lists records with a header and --limit, and prints the next-page command', async () => {
    const h = harness((req) => {
      const u = new URL(req.url);
      expect(u.pathname).toBe('/api/v1/audit');
      expect(u.searchParams.get('limit')).toBe('2');
      expect(u.searchParams.get('action')).toBe('user.update');
      return json({
        items: [
          {
            id: '9',
            at: '2026-01-02T00:00:00.000Z',
            actor: 'admin',
            action: 'user.update',
            target: 'bob',
            outcome: 'success',
            address: '127.0.0.1',
          },
        ],
        next_cursor: 'CUR',
      });
    });
    await h.login();
    h.out.length = 0;
    expect(await run(['audit', '--limit', '2', '--action', 'user.update'], h.io)).toBe(EXIT.ok);
    const lines = h.out.join('').trimEnd().split('\n');
    expect(lines[0]).toMatch(/^AT +ACTOR +ACTION +TARGET +OUTCOME +ADDRESS$/);
    expect(lines[1]).toMatch(
      /^2026-01-02T00:00:00.000Z admin +user\.update +bob +success 127\.0\.0\.1$/,
    );
    expect(h.err.join('')).toContain('trawl audit --action user.update --limit 2 --cursor CUR');
  });

  it('--verify exits 0 on an intact chain and 1 naming the record where it breaks', async () => {
    let ok = true;
    const h = harness(() =>
      json({
        ok,
        checked: 5,
        unchained: 0,
        anchor: { id: '0', hash: 'a' },
        head: { id: '5', hash: 'h5' },
        ...(ok ? {} : { broken: { id: '3', reason: 'hash mismatch' } }),
      }),
    );
    await h.login();
    expect(await run(['audit', '--verify'], h.io)).toBe(EXIT.ok);
    expect(h.out.join('')).toContain('audit chain ok: 5 record(s) checked');
    ok = false;
    expect(await run(['audit', '--verify'], h.io)).toBe(EXIT.error);
    expect(h.err.join('')).toContain('audit chain broken at record 3: hash mismatch');
  });
});

describe('trawl backup', () => {
  it('asks the server for an online backup and says where it is and how to restore it', async () => {
    const h = harness((req) => {
      expect(req.method).toBe('POST');
      expect(new URL(req.url).pathname).toBe('/api/v1/system/backup');
      return json({ file: '/d/backups/trawl-x.tar.gz', bytes: 3 * 1024 * 1024, created_at: 'x' });
    });
    await h.login();
    h.out.length = 0;
    expect(await run(['backup'], h.io)).toBe(EXIT.ok);
    expect(h.out.join('')).toBe(
      'backup written: /d/backups/trawl-x.tar.gz (3.0 MiB)\nrestore: stop Trawl, then pnpm -s restore /d/backups/trawl-x.tar.gz --force\n',
    );
  });
});

describe('README commands (printed ELIFECYCLE on a phishing verdict and on Ctrl-C)', () => {
  it('run pnpm scripts with -s, so pnpm adds nothing to a non-zero exit code', () => {
    const readme = readFileSync(join(import.meta.dirname, '../../../../README.md'), 'utf8');
    const commands = readme
      .split('\n')
      .filter((l) => /^(?:[^#`]*\s)?pnpm (?:trawl|start)\b/.test(l));
    expect(commands).toEqual([]);
    expect(readme).toContain('pnpm -s trawl analyze');
    expect(readme).toContain('pnpm -s start');
  });
});

import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildMsg } from '../../../mail/test/cfb-writer.ts';
import { type CliIo, EXIT, run } from '../../src/index.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

function eml(subject: string): string {
  return `From: a@b.example\r\nTo: c@d.example\r\nSubject: ${subject}\r\n\r\nhello\r\n`;
}

/** The CLI on a real folder, against a fake gateway that records what it was sent. */
function harness(tty: boolean) {
  const home = mkdtempSync(join(tmpdir(), 'trawl-cli-inputs-'));
  dirs.push(home);
  const out: string[] = [];
  const err: string[] = [];
  const sent: { type: string; body: string; report: string | null }[] = [];
  const io: CliIo = {
    env: { XDG_CONFIG_HOME: home },
    stdout: { write: (s: string) => out.push(s) },
    stderr: { write: (s: string) => err.push(s), isTTY: tty },
    readStdin: async () => Buffer.from('s3cret\n'),
    readFile: async (p: string) => readFileSync(p),
    listDir: async (p: string) => {
      try {
        if (!statSync(p).isDirectory()) return null;
      } catch {
        return null;
      }
      return readdirSync(p, { withFileTypes: true }).map((e) => ({
        name: e.name,
        dir: e.isDirectory(),
      }));
    },
    cwd: home,
    fetch: (async (input: string | URL | Request, init?: RequestInit) => {
      const req = new Request(input, init);
      const u = new URL(req.url);
      if (u.pathname === '/auth/token') return json({ access_token: 'A', refresh_token: 'R' });
      if (u.pathname === '/api/v1/analyze/raw') {
        const body = Buffer.from(await req.arrayBuffer()).toString('latin1');
        sent.push({
          type: req.headers.get('content-type') ?? '',
          body,
          report: u.searchParams.get('report'),
        });
        return json({
          job_id: `00000000-0000-4000-8000-${String(sent.length).padStart(12, '0')}`,
          email_id: 'e',
          status: 'queued',
          workflow: 'default',
          message: '',
        });
      }
      const n = Number(u.pathname.split('-').pop());
      const s = sent[n - 1];
      const subject = /Subject: ([^\r\n]*)/.exec(s?.body ?? '')?.[1] ?? 'from the msg';
      const phishing = subject.includes('verify');
      return json({
        job_id: u.pathname.split('/').pop(),
        status: 'completed',
        result: {
          is_phishing: phishing,
          confidence: 0.8,
          threat_level: phishing ? 'high' : 'none',
          recommended_action: phishing ? 'quarantine' : 'allow',
          summary: '',
          indicators: [],
          evidence: { message: { subject } },
        },
      });
    }) as typeof fetch,
    sleep: async () => {},
  };
  return { io, out, err, sent, home };
}

describe('trawl analyze: folders, mbox files and Outlook .msg', () => {
  it('submits every message of a folder tree (an mbox split, a .msg as application/vnd.ms-outlook), with a progress bar and a summary table', async () => {
    const h = harness(true);
    const box = join(h.home, 'reported');
    mkdirSync(join(box, 'sub'), { recursive: true });
    writeFileSync(join(box, 'a.eml'), eml('hello there'));
    writeFileSync(join(box, 'notes.pdf'), 'not mail');
    writeFileSync(
      join(box, 'sub', 'export.mbox'),
      `From x@y Mon Nov  2 10:00:00 2026\n${eml('please verify now')}\nFrom x@y Mon Nov  2 11:00:00 2026\nFrom: a@b.example\nSubject: lunch\n\n>From the kitchen\n`,
    );
    writeFileSync(
      join(box, 'sub', 'outlook.msg'),
      buildMsg({ subject: 'from the msg', fromAddress: 'a@b.example', text: 'hi' }),
    );
    await run(['login', '--url', 'http://t.example:1', '--user', 'a', '--password-stdin'], h.io);
    h.out.length = 0;
    const code = await run(['analyze', 'reported', '--wait', '--report'], h.io);
    expect(code).toBe(EXIT.phishing);
    expect(h.sent.map((s) => s.type)).toEqual([
      'message/rfc822',
      'message/rfc822',
      'message/rfc822',
      'application/vnd.ms-outlook',
    ]);
    expect(h.sent.every((s) => s.report === 'true')).toBe(true);
    // the mbox's second message, unquoted
    expect(h.sent[2]?.body).toContain('\nFrom the kitchen');
    const lines = h.out.join('').trimEnd().split('\n');
    expect(lines[0]).toMatch(/^FILE +SUBJECT +VERDICT +PROB +ACTION +JOB$/);
    expect(lines.slice(1, 5).map((l) => l.split(/ {2,}/).slice(0, 5))).toEqual([
      ['reported/a.eml', 'hello there', 'not phishing', '20%', 'allow'],
      ['reported/sub/export.mbox:1', 'please verify now', 'PHISHING', '80%', 'quarantine'],
      ['reported/sub/export.mbox:2', 'lunch', 'not phishing', '20%', 'allow'],
      ['reported/sub/outlook.msg', 'from the msg', 'not phishing', '20%', 'allow'],
    ]);
    expect(lines[5]).toBe('4 message(s): 1 phishing, 3 not phishing, 0 without a verdict');
    // the bar went to standard error on a terminal, and was cleared
    const bar = h.err.join('');
    expect(bar).toContain('submitting 4/4');
    expect(bar).toContain('analysing 4/4');
    expect(bar.endsWith('\r\x1b[K')).toBe(true);
  });

  it('draws no bar when standard error is not a terminal, and splits an mbox given alone', async () => {
    const h = harness(false);
    writeFileSync(
      join(h.home, 'two.mbox'),
      `From x@y Mon Nov  2 10:00:00 2026\n${eml('one')}\nFrom x@y Mon Nov  2 11:00:00 2026\n${eml('two')}`,
    );
    await run(['login', '--url', 'http://t.example:1', '--user', 'a', '--password-stdin'], h.io);
    h.out.length = 0;
    expect(await run(['analyze', 'two.mbox', '--wait'], h.io)).toBe(EXIT.ok);
    expect(h.sent).toHaveLength(2);
    expect(h.err.join('')).toBe('');
    expect(h.out.join('')).toContain('2 message(s): 0 phishing, 2 not phishing');
  });
});

/**
 * `pnpm bench:mail --large`: what parsing one large raw message costs the thread that runs it (the
 * gateway's HTTP thread for POST /api/v1/analyze/raw, issue 15). Synthetic 10 MiB messages of the
 * shapes that cost the parser most: one base64 attachment, one long text body, one long HTML body
 * (text extraction), many small parts (up to the 500-part limit), many lines of one long header. For
 * each: the median and worst of BENCH_PASSES passes (default 5) of parseRawEmail, in ms, which is
 * how long the event loop is blocked (the parse is synchronous between its start and its answer),
 * measured as the largest event-loop delay seen meanwhile.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseRawEmail } from '@trawl/mail';

const MiB = 1024 * 1024;
const SIZE = Number(process.env.BENCH_LARGE_MIB ?? 10) * MiB;
const PASSES = Number(process.env.BENCH_PASSES ?? 5);

const head = (contentType: string) =>
  [
    'From: "Sender" <sender@example.org>',
    'To: rcpt@example.net',
    'Subject: large message',
    'Date: Tue, 03 Nov 2026 10:00:00 +0000',
    'Message-ID: <large@example.org>',
    'MIME-Version: 1.0',
    `Content-Type: ${contentType}`,
  ].join('\r\n');

function wrap76(s: string): string {
  const out: string[] = [];
  for (let i = 0; i < s.length; i += 76) out.push(s.slice(i, i + 76));
  return out.join('\r\n');
}

function attachment(): string {
  const bytes = Buffer.alloc(Math.floor((SIZE * 3) / 4) - 4096, 0x41);
  return [
    head('multipart/mixed; boundary="b"'),
    '',
    '--b',
    'Content-Type: text/plain',
    '',
    'See the attached file.',
    '--b',
    'Content-Type: application/pdf; name="big.pdf"',
    'Content-Disposition: attachment; filename="big.pdf"',
    'Content-Transfer-Encoding: base64',
    '',
    wrap76(bytes.toString('base64')),
    '--b--',
    '',
  ].join('\r\n');
}

function textBody(): string {
  const line = 'Lorem ipsum dolor sit amet, visit https://example.com/page?id=1 today.\r\n';
  return `${head('text/plain; charset=utf-8')}\r\n\r\n${line.repeat(Math.floor(SIZE / line.length))}`;
}

function htmlBody(): string {
  const chunk =
    '<p>Dear customer, <a href="https://example.com/x">verify</a> your <b>account</b>.</p>\r\n';
  return `${head('text/html; charset=utf-8')}\r\n\r\n<html><body>${chunk.repeat(Math.floor(SIZE / chunk.length))}</body></html>`;
}

function manyParts(): string {
  const parts = 490;
  const per = Math.floor(SIZE / parts) - 200;
  const body = wrap76(Buffer.alloc(Math.floor((per * 3) / 4), 0x42).toString('base64'));
  const out = [head('multipart/mixed; boundary="b"'), ''];
  for (let i = 0; i < parts; i++) {
    out.push('--b', `Content-Type: application/octet-stream; name="p${i}.bin"`);
    out.push('Content-Transfer-Encoding: base64', '', body);
  }
  out.push('--b--', '');
  return out.join('\r\n');
}

function longHeader(): string {
  // a folded header of ~1 MiB (the header bound), then a 9 MiB text body
  const fold = `X-Long: ${'a'.repeat(70)}${`\r\n ${'b'.repeat(70)}`.repeat(Math.floor(MiB / 73))}`;
  const body = 'plain line of text\r\n'.repeat(Math.floor((SIZE - MiB) / 20));
  return `${head('text/plain')}\r\n${fold}\r\n\r\n${body}`;
}

const shapes: [string, () => string][] = [
  ['one base64 attachment', attachment],
  ['text body', textBody],
  ['HTML body', htmlBody],
  ['490 base64 parts', manyParts],
  ['1 MiB folded header + text', longHeader],
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

console.log(`parseRawEmail of ${SIZE / MiB} MiB messages, ${PASSES} passes each (ms)`);
for (const [name, make] of shapes) {
  const raw = Buffer.from(make(), 'utf8');
  const wall: number[] = [];
  const blocked: number[] = [];
  let outcome = 'ok';
  for (let i = 0; i < PASSES; i++) {
    const h = monitorEventLoopDelay({ resolution: 1 });
    h.enable();
    // a turn for the monitor's timer to arm before the parse
    await new Promise((r) => setTimeout(r, 5));
    const t = performance.now();
    try {
      await parseRawEmail(raw, { maxBytes: 25 * MiB });
    } catch (e) {
      outcome = (e as { code?: string }).code ?? (e as Error).message;
    }
    wall.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 5));
    h.disable();
    blocked.push(h.max / 1e6);
  }
  console.log(
    `${name.padEnd(28)} ${(raw.length / MiB).toFixed(1)} MiB  parse median ${median(wall).toFixed(0)} ms, worst ${Math.max(...wall).toFixed(0)} ms; event loop blocked up to ${Math.max(...blocked).toFixed(0)} ms  (${outcome})`,
  );
}

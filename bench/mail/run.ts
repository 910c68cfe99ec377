/**
 * Mail parsing benchmark (`pnpm bench:mail`): @trawl/mail's parseRawEmail over every message of the
 * corpus (`<repo>/../shared/corpus/{phishing,ham}/*.eml`, read in place), measured in the same run
 * against two baselines on the same bytes:
 *  - `legacy`: the mailparser-based parseRawEmail it replaced (packages/mail/test/reference, ADR 009),
 *    same Email out; the difference is what the synchronous MIME parser (src/mime) saves;
 *  - `simpleParser`: mailparser's own simpleParser with the same skip* options, the library alone
 *    (no Trawl layer: bounds, header decoding, address and date rules, body clean-up, language
 *    guess, Email validation).
 *
 * Prints, for each side: the first (cold) pass, then the median of BENCH_PASSES steady passes
 * (default 5) in ms/msg of wall time and of CPU time, and msgs/s. The sides rotate which one runs
 * first in each pass so that a noisy neighbour hurts them alike.
 *
 * `pnpm bench:mail --large` measures one 10 MiB message of each costly shape (bench/mail/large.ts).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseRawEmail } from '@trawl/mail';
import { legacyParseRawEmail } from '@trawl/mail/testing';

if (process.argv.includes('--large')) {
  await import('./large.ts');
  process.exit(0);
}

const here = dirname(fileURLToPath(import.meta.url));
const corpus = join(here, '../../../shared/corpus');
const PASSES = Math.max(1, Number(process.env.BENCH_PASSES ?? 5));
const ENVELOPE = { to: ['mailbox@bench.invalid'] };

if (!existsSync(join(corpus, 'phishing')) && !existsSync(join(corpus, 'ham'))) {
  console.log(`bench:mail skipped: no corpus at ${corpus} (expects phishing/ and ham/ of .eml)`);
  process.exit(0);
}

/** mailparser as @trawl/mail resolves it (same version, same install). */
const requireFromMail = createRequire(join(here, '../../packages/mail/package.json'));
const { simpleParser } = requireFromMail('mailparser') as {
  simpleParser: (input: Buffer, options: Record<string, unknown>) => Promise<unknown>;
};
// the options parseRawEmail gives its MailParser
const SIMPLE_OPTIONS = {
  skipHtmlToText: true,
  skipTextToHtml: true,
  skipTextLinks: true,
  skipImageLinks: true,
  maxHeadSize: 1024 * 1024 + 64 * 1024,
  maxChildNodes: 500,
};

const messages: Buffer[] = [];
for (const label of ['phishing', 'ham']) {
  const dir = join(corpus, label);
  if (!existsSync(dir)) continue;
  for (const f of readdirSync(dir).sort()) {
    if (f.endsWith('.eml')) messages.push(readFileSync(join(dir, f)));
  }
}
if (messages.length === 0) {
  console.log(`bench:mail skipped: no .eml files under ${corpus}`);
  process.exit(0);
}
const bytes = messages.reduce((n, m) => n + m.length, 0);

interface Pass {
  wallMs: number;
  cpuMs: number;
  failed: number;
}

type Side = 'trawl' | 'legacy' | 'simpleParser';
const run: Record<Side, (m: Buffer) => Promise<unknown>> = {
  trawl: (m) => parseRawEmail(m, { envelope: ENVELOPE }),
  legacy: (m) => legacyParseRawEmail(m, { envelope: ENVELOPE }),
  simpleParser: (m) => simpleParser(m, SIMPLE_OPTIONS),
};

async function pass(side: Side): Promise<Pass> {
  let failed = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (const m of messages) {
    try {
      await run[side](m);
    } catch {
      failed++;
    }
  }
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { wallMs, cpuMs: (cpu.user + cpu.system) / 1000, failed };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1
    ? (s[mid] as number)
    : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

const sides: Side[] = ['trawl', 'legacy', 'simpleParser'];
const cold = new Map<Side, Pass>();
const steady = new Map<Side, Pass[]>(sides.map((s) => [s, []]));
for (const side of sides) cold.set(side, await pass(side));
for (let i = 0; i < PASSES; i++) {
  const order = [...sides.slice(i % sides.length), ...sides.slice(0, i % sides.length)];
  for (const side of order) steady.get(side)?.push(await pass(side));
}

const n = messages.length;
const fmt = (ms: number): string => (ms / n).toFixed(3).padStart(8);
console.log(
  `bench:mail: ${n} messages, ${(bytes / 1024 / 1024).toFixed(1)} MiB, ${PASSES} steady passes (median); ms/msg`,
);
console.log(
  '               cold wall  cold cpu  steady wall  steady cpu  msgs/s (wall)  msgs/s (cpu)  failed',
);
const figures = new Map<Side, number>();
for (const side of sides) {
  const c = cold.get(side) as Pass;
  const list = steady.get(side) as Pass[];
  const wall = median(list.map((p) => p.wallMs));
  const cpu = median(list.map((p) => p.cpuMs));
  figures.set(side, cpu);
  console.log(
    [
      side.padEnd(14),
      fmt(c.wallMs),
      fmt(c.cpuMs).padStart(9),
      fmt(wall).padStart(12),
      fmt(cpu).padStart(11),
      ((n * 1000) / wall).toFixed(0).padStart(14),
      ((n * 1000) / cpu).toFixed(0).padStart(13),
      String(list[0]?.failed ?? 0).padStart(7),
    ].join(' '),
  );
}
const ours = figures.get('trawl') as number;
const legacy = figures.get('legacy') as number;
const base = figures.get('simpleParser') as number;
console.log(
  `trawl vs legacy (mailparser-based parseRawEmail, same output): ${((ours - legacy) / n).toFixed(3)} ms/msg CPU (${(ours / legacy).toFixed(2)}x)`,
);
console.log(
  `trawl vs simpleParser (the library alone): ${((ours - base) / n).toFixed(3)} ms/msg CPU (${(ours / base).toFixed(2)}x); the cold passes of legacy and simpleParser run after trawl's and share mailparser's warm-up`,
);

/**
 * `pnpm bench:mail --urls`: the analyzers' side of @trawl/mail, extractUrls and htmlToText, over the
 * Email of every corpus message (parsed once before the clock starts and passed through JSON, as the
 * orchestrator reads it from the store), beside the implementations they replaced (test/reference)
 * in the same run, on the same Emails. Prints CPU µs per message of each side (median of
 * BENCH_PASSES passes, default 7; the sides alternate which one runs first) and whether every answer
 * of the two sides is the same.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Email } from '@trawl/contracts';
import { extractUrls, htmlToText, parseRawEmail } from '@trawl/mail';
import { extractUrls as legacyExtractUrls } from '../../packages/mail/test/reference/legacy-extract-urls.ts';
import { htmlToText as legacyHtmlToText } from '../../packages/mail/test/reference/legacy-html-to-text.ts';

const here = dirname(fileURLToPath(import.meta.url));
const corpus = join(here, '../../../shared/corpus');
const PASSES = Math.max(1, Number(process.env.BENCH_PASSES ?? 7));

const texts: string[] = [];
for (const label of ['phishing', 'ham']) {
  const dir = join(corpus, label);
  if (!existsSync(dir)) continue;
  for (const f of readdirSync(dir).sort()) {
    if (!f.endsWith('.eml')) continue;
    try {
      const e = await parseRawEmail(readFileSync(join(dir, f)), {
        envelope: { to: ['mailbox@bench.invalid'] },
      });
      texts.push(JSON.stringify(e));
    } catch {
      // refused by the gateway: no job
    }
  }
}
if (texts.length === 0) {
  console.log(`bench:mail --urls skipped: no corpus at ${corpus}`);
  process.exit(0);
}
const fresh = (): Email[] => texts.map((t) => JSON.parse(t) as Email);

interface Side {
  extractUrls: typeof extractUrls;
  htmlToText: typeof htmlToText;
}
const sides: Record<'current' | 'legacy', Side> = {
  current: { extractUrls, htmlToText },
  legacy: { extractUrls: legacyExtractUrls, htmlToText: legacyHtmlToText },
};
type Name = keyof typeof sides;

// same answers, message by message
let differ = 0;
for (const e of fresh()) {
  const a = JSON.stringify([extractUrls(e), htmlToText(e.body_html ?? '')]);
  const b = JSON.stringify([legacyExtractUrls(e), legacyHtmlToText(e.body_html ?? '')]);
  if (a !== b) differ++;
}

const cpuUs = (): number => {
  const c = process.cpuUsage();
  return c.user + c.system;
};

/** CPU µs per message of extractUrls, then of htmlToText of the HTML body, for one pass. */
function pass(side: Side): [number, number] {
  const emails = fresh();
  const t0 = cpuUs();
  for (const e of emails) side.extractUrls(e);
  const t1 = cpuUs();
  for (const e of emails) if (e.body_html) side.htmlToText(e.body_html);
  const t2 = cpuUs();
  return [(t1 - t0) / emails.length, (t2 - t1) / emails.length];
}

const runs: Record<Name, [number, number][]> = { current: [], legacy: [] };
pass(sides.current);
pass(sides.legacy);
for (let i = 0; i < PASSES; i++) {
  const order: Name[] = i % 2 === 0 ? ['current', 'legacy'] : ['legacy', 'current'];
  for (const name of order) runs[name].push(pass(sides[name]));
}
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1
    ? (s[mid] as number)
    : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};
console.log(
  `bench:mail --urls: ${texts.length} Emails, ${PASSES} passes (median), CPU µs/msg; answers differing from legacy: ${differ}`,
);
console.log('               extractUrls  htmlToText(body_html)');
for (const name of ['current', 'legacy'] as const) {
  const r = runs[name];
  console.log(
    `${name.padEnd(14)} ${median(r.map((x) => x[0]))
      .toFixed(1)
      .padStart(11)}  ${median(r.map((x) => x[1]))
      .toFixed(1)
      .padStart(21)}`,
  );
}

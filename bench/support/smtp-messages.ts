import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The messages bench:smtp and bench:profile send through Postfix: even i a colleague's note, odd i a
 * credential lure; `tag` keeps each run's Message-IDs apart.
 */
export function message(tag: string, i: number): string {
  const phish = i % 2 === 1;
  return [
    phish
      ? 'From: "PayPal Security" <security@paypa1-verify.example>'
      : 'From: Alice Martin <alice@colleagues.example>',
    'To: bob@example.org',
    phish
      ? 'Subject: Your account has been locked - verify within 24 hours'
      : `Subject: Minutes of the planning meeting ${i}`,
    `Message-ID: <${tag}-${i}@bench.trawl.test>`,
    'Date: Mon, 2 Nov 2026 09:00:00 +0000',
    'Content-Type: text/plain; charset=utf-8',
    '',
    phish
      ? 'Dear customer, unauthorized access was detected. Verify your password now at http://paypa1-verify.example/login or your account will be suspended.'
      : `Hi Bob, attached are the notes from meeting ${i}. Next one is on Thursday at 10. Alice`,
    '',
  ].join('\r\n');
}

/**
 * The same `n` messages as a corpus folder (`dir`/ham and `dir`/phishing, as `pnpm eval` reads
 * them) for the analysis-alone baseline beside them.
 */
export function writeMessagesAsCorpus(dir: string, n: number): void {
  for (const label of ['ham', 'phishing']) mkdirSync(join(dir, label), { recursive: true });
  for (let i = 0; i < n; i++) {
    const label = i % 2 === 1 ? 'phishing' : 'ham';
    writeFileSync(join(dir, label, `${String(i).padStart(5, '0')}.eml`), message('alone', i));
  }
}

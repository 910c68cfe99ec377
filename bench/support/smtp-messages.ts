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

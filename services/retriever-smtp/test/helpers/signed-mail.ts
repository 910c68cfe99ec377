// The sending domain moved to the package's testing entry (the benches use it too).
export { type SendingDomain, sendingDomain } from '../../src/testing/index.ts';

/** A plain message (CRLF) from `from` to bob@example.org. */
export function message(o: {
  from: string;
  subject: string;
  id: string;
  extra?: string[];
}): string {
  return [
    ...(o.extra ?? []),
    `From: ${o.from}`,
    'To: bob@example.org',
    `Subject: ${o.subject}`,
    `Message-ID: <${o.id}>`,
    'Date: Mon, 2 Nov 2026 09:00:00 +0000',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Hello Bob, the minutes of the meeting are below.',
    '',
  ].join('\r\n');
}

/** Raw RFC 822 messages of a chosen size or shape, for the CPU-pool tests and benchmark (issue 15). */

const HEAD = [
  'From: "Bank" <security@examp1e-bank.com>',
  'To: alice@example.org',
  'Subject: Verify your account',
  'Date: Wed, 01 May 2024 09:30:00 +0000',
  'Message-ID: <big@examp1e-bank.com>',
  'MIME-Version: 1.0',
];

function base64Lines(buf: Buffer): string {
  const b64 = buf.toString('base64');
  const out: string[] = [];
  for (let i = 0; i < b64.length; i += 76) out.push(b64.slice(i, i + 76));
  return out.join('\r\n');
}

/**
 * A multipart message of about `bytes` bytes: text and HTML alternatives (about a quarter of it,
 * quoted-printable-free, with links and tables) and a PDF attachment (the rest, base64).
 */
export function rawMessage(bytes: number): Buffer {
  const htmlBytes = Math.max(64, Math.floor(bytes / 4));
  const row =
    '<tr><td style="color:#333">Verify your <a href="https://examp1e-bank.com/login">account</a> at once</td></tr>\r\n';
  const html = `<html><body><table>\r\n${row.repeat(Math.max(1, Math.ceil(htmlBytes / row.length)))}</table></body></html>`;
  const attachBytes = Math.max(0, Math.floor(((bytes - html.length - 1024) * 3) / 4));
  const pdf = Buffer.alloc(attachBytes, 0x41);
  pdf.write('%PDF-1.4\n', 0);
  const lines = [
    ...HEAD,
    'Content-Type: multipart/mixed; boundary="mixed"',
    '',
    '--mixed',
    'Content-Type: multipart/alternative; boundary="alt"',
    '',
    '--alt',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Please verify your account within 24 hours.',
    '--alt',
    'Content-Type: text/html; charset=utf-8',
    '',
    html,
    '--alt--',
    ...(attachBytes > 0
      ? [
          '--mixed',
          'Content-Type: application/pdf; name="statement.pdf"',
          'Content-Disposition: attachment; filename="statement.pdf"',
          'Content-Transfer-Encoding: base64',
          '',
          base64Lines(pdf),
        ]
      : []),
    '--mixed--',
    '',
  ];
  return Buffer.from(lines.join('\r\n'));
}

/**
 * A hostile message: `parts` sibling MIME parts (each a tiny text part with its own headers) inside
 * a single multipart, padded with `padBytes` of header folding per part: parsing it is all
 * per-part bookkeeping.
 */
export function manyPartsMessage(parts: number, padBytes = 0): Buffer {
  const pad = padBytes > 0 ? `X-Pad: ${'a'.repeat(padBytes)}\r\n` : '';
  const part = `--b\r\nContent-Type: text/plain\r\n${pad}\r\nx\r\n`;
  return Buffer.from(
    `${HEAD.join('\r\n')}\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n${part.repeat(parts)}--b--\r\n`,
  );
}

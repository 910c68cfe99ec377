import { BadInputError, Email } from '@trawl/contracts';
import { describe, expect, it } from 'vitest';
import type { ParseRawEmailOptions } from '../../src/index.ts';
import { MAIL_ERROR_CODES, PARSER_NOTES_HEADER, parseRawEmail } from '../../src/index.ts';

const HEAD =
  'From: a@example.com\r\nTo: b@example.com\r\nSubject: hostile\r\nDate: Fri, 3 May 2024 11:22:33 +0000\r\n';

/** Every hostile input ends as a valid Email or a BadInputError, never anything else. */
async function outcome(
  raw: Buffer | string,
  opts?: ParseRawEmailOptions,
): Promise<Email | BadInputError> {
  try {
    const e = await parseRawEmail(raw, opts);
    expect(Email.safeParse(e).success).toBe(true);
    return e;
  } catch (err) {
    expect(err).toBeInstanceOf(BadInputError);
    return err as BadInputError;
  }
}

function nested(depth: number): string {
  let open = '';
  let close = '';
  for (let i = 0; i < depth; i++) {
    open += `Content-Type: multipart/mixed; boundary="b${i}"\r\n\r\n--b${i}\r\n`;
    close = `\r\n--b${i}--\r\n${close}`;
  }
  return `${HEAD}MIME-Version: 1.0\r\n${open}Content-Type: text/plain\r\n\r\ndeep inside${close}`;
}

describe('parseRawEmail: hostile input is bounded and never crashes', () => {
  it('a header block larger than maxHeaderBytes is cut and noted', async () => {
    const pad = 'X-Pad: '.concat('a'.repeat(990), '\r\n').repeat(2200);
    const r = await outcome(`${HEAD}${pad}\r\nbody after huge headers\r\n`, {
      maxHeaderBytes: 512 * 1024,
    });
    expect(r).not.toBeInstanceOf(BadInputError);
    const e = r as Email;
    expect(e.body_text).toContain('body after huge headers');
    expect(String(e.headers.raw_headers?.[PARSER_NOTES_HEADER])).toContain(
      'header block larger than',
    );
  });

  it('10k headers: raw_headers stays bounded', async () => {
    const many = Array.from({ length: 10_000 }, (_, i) => `X-H${i % 500}: value ${i}\r\n`).join('');
    const e = (await outcome(`${HEAD}${many}\r\nbody\r\n`)) as Email;
    expect(e.headers.sender).toBe('a@example.com');
    const raw = e.headers.raw_headers ?? {};
    expect(Object.keys(raw).length).toBeLessThanOrEqual(302);
    expect(JSON.stringify(raw).length).toBeLessThan(400 * 1024);
  });

  it('one enormous header value is truncated', async () => {
    const e = (await outcome(`${HEAD}X-Big: ${'z'.repeat(500_000)}\r\n\r\nbody\r\n`)) as Email;
    expect(String(e.headers.raw_headers?.['x-big']).length).toBeLessThanOrEqual(8192);
  });

  it('deep multipart nesting over maxDepth is refused with 422', async () => {
    const r = await outcome(nested(1000));
    expect(r).toBeInstanceOf(BadInputError);
    expect((r as BadInputError).code).toBe(MAIL_ERROR_CODES.unparseable);
    expect((r as BadInputError).status).toBe(422);
  });

  it('nesting within maxDepth parses', async () => {
    const e = (await outcome(nested(20))) as Email;
    expect(e.body_text).toContain('deep inside');
  });

  it('thousands of parts end in a bounded answer', async () => {
    const parts = Array.from(
      { length: 3000 },
      (_, i) => `--P\r\nContent-Type: text/plain\r\n\r\npart ${i}\r\n`,
    ).join('');
    const r = await outcome(
      `${HEAD}Content-Type: multipart/mixed; boundary="P"\r\n\r\n${parts}--P--\r\n`,
    );
    if (r instanceof BadInputError) expect(r.code).toBe(MAIL_ERROR_CODES.unparseable);
  });

  it('many attachments are capped at maxAttachments', async () => {
    const parts = Array.from(
      { length: 150 },
      (_, i) =>
        `--P\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename="f${i}.bin"\r\nContent-Transfer-Encoding: base64\r\n\r\nAAECAw==\r\n`,
    ).join('');
    const e = (await outcome(
      `${HEAD}Content-Type: multipart/mixed; boundary="P"\r\n\r\n--P\r\nContent-Type: text/plain\r\n\r\nhi\r\n${parts}--P--\r\n`,
    )) as Email;
    expect(e.attachments?.length).toBe(100);
    expect(String(e.headers.raw_headers?.[PARSER_NOTES_HEADER])).toContain(
      '50 attachments over the limit dropped',
    );
  });

  it('broken base64 and quoted-printable do not sink the message', async () => {
    const b64 = await outcome(
      `${HEAD}Content-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\n!!!%%%***SGVsbG8=@@@\r\n`,
    );
    expect(b64).not.toBeInstanceOf(BadInputError);
    const qp = (await outcome(
      `${HEAD}Content-Type: text/plain\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nbad =ZZ escape =\r\n=E2=82 cut\r\n`,
    )) as Email;
    expect(qp.body_text).toContain('escape');
  });

  it('unknown and wrong charsets still give text', async () => {
    const unknown = (await outcome(
      `${HEAD}Content-Type: text/plain; charset=x-no-such-charset\r\n\r\nplain ascii body\r\n`,
    )) as Email;
    expect(unknown.body_text).toContain('plain ascii body');
    const wrong = Buffer.concat([
      Buffer.from(`${HEAD}Content-Type: text/plain; charset=utf-8\r\n\r\n`),
      Buffer.from('caf\xe9 cr\xe8me\r\n', 'latin1'),
    ]);
    expect(((await outcome(wrong)) as Email).body_text).toContain('caf');
  });

  it('NUL bytes are removed from headers and bodies', async () => {
    const e = (await outcome(
      `From: a@example.com\r\nTo: b@example.com\r\nSubject: nul\u0000here\r\nDate: Fri, 3 May 2024 11:22:33 +0000\r\n\r\nbo\u0000dy\r\n`,
    )) as Email;
    expect(e.headers.subject).toBe('nulhere');
    expect(e.body_text).toContain('body');
    expect(JSON.stringify(e)).not.toContain('\\u0000');
  });

  it('text that is not a message at all is refused with 422', async () => {
    const r = await outcome('just some words\nwithout any header at all\n');
    expect(r).toBeInstanceOf(BadInputError);
    expect((r as BadInputError).status).toBe(422);
    const bin = await outcome(
      Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7919) % 256)),
    );
    expect(bin).toBeInstanceOf(BadInputError);
  });

  it('an empty message is refused with 422', async () => {
    expect(((await outcome('')) as BadInputError).status).toBe(422);
  });

  it('over maxBytes answers 413', async () => {
    const r = await outcome(`${HEAD}\r\n${'x'.repeat(2000)}`, { maxBytes: 1000 });
    expect(r).toBeInstanceOf(BadInputError);
    expect((r as BadInputError).status).toBe(413);
    expect((r as BadInputError).code).toBe(MAIL_ERROR_CODES.tooLarge);
  });

  it('a multi-megabyte line without line breaks is bounded', async () => {
    const e = await outcome(
      `${HEAD}Content-Type: text/plain\r\n\r\n${'y'.repeat(3 * 1024 * 1024)}`,
    );
    expect(e).not.toBeInstanceOf(BadInputError);
  });

  it('gives up after timeoutMs with 422', async () => {
    const big = `${HEAD}Content-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\n${'QUJD\r\n'.repeat(400_000)}`;
    const r = await outcome(big, { timeoutMs: 1 });
    expect(r).toBeInstanceOf(BadInputError);
    expect((r as BadInputError).code).toBe(MAIL_ERROR_CODES.unparseable);
  });

  it('random mutations of a real-looking message never throw anything but BadInputError', async () => {
    const base = Buffer.from(
      `${HEAD}MIME-Version: 1.0\r\nContent-Type: multipart/alternative; boundary="A"\r\n\r\n--A\r\nContent-Type: text/plain; charset=iso-8859-1\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nGr=FC=DFe\r\n--A\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\nPGI+aGk8L2I+\r\n--A--\r\n`,
    );
    let seed = 42;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let round = 0; round < 200; round++) {
      const b = Buffer.from(base);
      for (let k = 0; k < 1 + rnd(8); k++) b[rnd(b.length)] = rnd(256);
      await outcome(b);
    }
  });
});

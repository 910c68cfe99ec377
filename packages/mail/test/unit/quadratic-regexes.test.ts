/**
 * Regression test for the quadratic regular expressions over message content (issue 15, "Quadratic
 * regexes stall the process"): a base64 part of many line breaks then `!`, a URL followed by a run
 * of dots, `url(` runs in style attributes, runs of `>` after an address, lone CRs in a header, long
 * Received / Delivered-To values without a usable address, and `<input` runs in HTML. Each public
 * function is fed long runs of the characters its patterns read, up to the size limits it applies,
 * and must answer within a budget that linear work meets by far (each case takes milliseconds to a
 * few hundred; the quadratic versions took from seconds to hours on the same inputs).
 */
import { BadInputError } from '@trawl/contracts';
import { describe, expect, it } from 'vitest';
import {
  domainOfAddress,
  extractUrls,
  htmlToText,
  parseRawEmail,
  registrableDomain,
  sniffAttachment,
} from '../../src/index.ts';

const BUDGET_MS = 2000;
const KB = 1024;
const MB = 1024 * 1024;

/** `unit` repeated to about `bytes` characters. */
function run(unit: string, bytes: number): string {
  return unit.repeat(Math.max(1, Math.floor(bytes / unit.length)));
}

async function timed(work: () => unknown): Promise<number> {
  const start = performance.now();
  try {
    await work();
  } catch (err) {
    // a refusal is an answer: only the time it takes matters here
    if (!(err instanceof BadInputError)) throw err;
  }
  return performance.now() - start;
}

interface Case {
  name: string;
  work: () => unknown;
}

function bounded(cases: Case[]): void {
  for (const c of cases) {
    it(`${c.name} (under ${BUDGET_MS} ms)`, async () => {
      expect(await timed(c.work)).toBeLessThan(BUDGET_MS);
    });
  }
}

const HEAD =
  'From: a@example.com\r\nTo: b@example.com\r\nSubject: hostile\r\nDate: Fri, 3 May 2024 11:22:33 +0000\r\n';
/** No To: recipients are looked for in Delivered-To, Envelope-To, Received. */
const HEAD_NO_TO =
  'From: a@example.com\r\nSubject: hostile\r\nDate: Fri, 3 May 2024 11:22:33 +0000\r\n';

/** A message with one base64 attachment whose encoded body is `body`. */
function base64Part(body: string): string {
  return `${HEAD}MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="B"\r\n\r\n--B\r\nContent-Type: text/plain\r\n\r\nhello\r\n--B\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename="a.bin"\r\nContent-Transfer-Encoding: base64\r\n\r\n${body}\r\n--B--\r\n`;
}

describe('parseRawEmail: base64 bodies (CLEAN_BASE64, libbase64 segments)', () => {
  bounded([
    { name: '1 MB of CRLF then !', work: () => parseRawEmail(base64Part(`${run('\r\n', MB)}!`)) },
    { name: '1 MB of LF then !', work: () => parseRawEmail(base64Part(`${run('\n', MB)}!`)) },
    { name: '1 MB of letters then !', work: () => parseRawEmail(base64Part(`${run('A', MB)}!`)) },
    {
      name: 'letters, ==, 1 MB of CRLF then !',
      work: () => parseRawEmail(base64Part(`QUJD==${run('\r\n', MB)}!`)),
    },
    { name: '1 MB of =', work: () => parseRawEmail(base64Part(run('=', MB))) },
    {
      name: '1 MB of A= (padding everywhere)',
      work: () => parseRawEmail(base64Part(run('A=', MB))),
    },
  ]);

  it('a clean base64 body still decodes to its bytes', async () => {
    const bytes = Buffer.from('attachment bytes \u00ff\u0000');
    const b64 = bytes.toString('base64').replace(/(.{4})/g, '$1\r\n');
    const e = await parseRawEmail(base64Part(b64));
    expect(Buffer.from(e.attachments?.[0]?.content ?? '', 'base64').equals(bytes)).toBe(true);
  });
});

describe('parseRawEmail: header blocks and address fallbacks', () => {
  bounded([
    {
      name: 'a header with 900 KB of lone CRs',
      work: () => parseRawEmail(`${HEAD}X-A: a${run('\r', 900 * KB)}b\r\n\r\nbody\r\n`),
    },
    {
      name: 'a header line of 900 KB of lone CRs',
      work: () => parseRawEmail(`${HEAD}X-A: a\r\n${run('\r', 900 * KB)}b\r\n\r\nbody\r\n`),
    },
    {
      name: '120 Received headers of "for" then 8000 @',
      work: () =>
        parseRawEmail(
          `${HEAD_NO_TO}${run(`Received: from x by y for ${run('@', 8000)}\r\n`, MB)}\r\nb`,
        ),
    },
    {
      name: '120 Received headers of "for" then 8000 letters and @',
      work: () =>
        parseRawEmail(
          `${HEAD_NO_TO}${run(`Received: by y for ${run('a@', 8000)} x\r\n`, MB)}\r\nb`,
        ),
    },
    {
      name: '120 Delivered-To headers of 8000 letters',
      work: () =>
        parseRawEmail(`${HEAD_NO_TO}${run(`Delivered-To: ${run('a', 8000)}\r\n`, MB)}\r\nbody\r\n`),
    },
    {
      name: '120 Return-Path headers of 8000 dots (no From)',
      work: () =>
        parseRawEmail(
          `To: b@example.com\r\nDate: Fri, 3 May 2024 11:22:33 +0000\r\n${run(`Return-Path: ${run('.', 8000)}\r\n`, MB)}\r\nbody\r\n`,
        ),
    },
    {
      name: 'From of 500 KB of commas',
      work: () => parseRawEmail(`From: ${run(',', 500 * KB)}a@example.com\r\n${HEAD}\r\nbody\r\n`),
    },
    {
      name: 'To of 500 KB of <',
      work: () => parseRawEmail(`${HEAD}Cc: ${run('<', 500 * KB)}b@example.com\r\n\r\nbody\r\n`),
    },
    {
      name: 'Date of 500 KB of (',
      work: () => parseRawEmail(`${HEAD}X-Date: ${run('(', 500 * KB)}\r\n\r\nbody\r\n`),
    },
  ]);

  it('Received "for <addr>;" and Delivered-To still give the recipient', async () => {
    const viaReceived = await parseRawEmail(
      `${HEAD_NO_TO}Received: from x by y with ESMTP for <rcpt@example.org>; Fri, 3 May 2024 11:22:33 +0000\r\n\r\nbody\r\n`,
    );
    expect(viaReceived.headers.recipients).toEqual(['rcpt@example.org']);
    const viaDelivered = await parseRawEmail(
      `${HEAD_NO_TO}Delivered-To: "x" <dt@example.org>, other\r\n\r\nbody\r\n`,
    );
    expect(viaDelivered.headers.recipients).toEqual(['dt@example.org']);
  });
});

describe('domainOfAddress, registrableDomain: runs after the @', () => {
  bounded([
    { name: '1 MB of > then a line break', work: () => domainOfAddress(`a@${run('>', MB)}\nx`) },
    {
      name: '1 MB of spaces then a line break',
      work: () => domainOfAddress(`a@${run(' ', MB)}\nx`),
    },
    {
      name: '1 MB of > then CRLF',
      work: () => registrableDomain(`a@example.com${run('>', MB)}\r\nx`),
    },
  ]);

  it('still cuts the domain at > or white space', () => {
    expect(domainOfAddress('a@Example.COM> trailing')).toBe('example.com');
    expect(domainOfAddress('a@example.com x')).toBe('example.com');
    expect(registrableDomain('a@mail.example.co.uk')).toBe('example.co.uk');
  });
});

describe('extractUrls: text URLs (trailing punctuation)', () => {
  // extractUrls reads the first MiB of the text: the run and what ends it stay within it
  const dots = (unit: string) => `see http://example.com/${run(unit, MB - 64)}x and more`;
  bounded([
    { name: 'a URL then 1 MB of dots then x', work: () => extractUrls({ body_text: dots('.') }) },
    { name: 'a URL then 1 MB of commas then x', work: () => extractUrls({ body_text: dots(',') }) },
    { name: 'a URL then 1 MB of ) then x', work: () => extractUrls({ body_text: dots(')') }) },
    { name: 'a URL then 1 MB of ?! then x', work: () => extractUrls({ body_text: dots('?!') }) },
    { name: '1 MB of www.', work: () => extractUrls({ body_text: run('www.', MB) }) },
    { name: '1 MB of http://', work: () => extractUrls({ body_text: run('http://', MB) }) },
  ]);

  it('still strips trailing punctuation', () => {
    const urls = extractUrls({
      body_text: 'go to https://example.com/a/b.). or (http://x.example/y)',
    });
    expect(urls.map((u) => u.url)).toEqual(['https://example.com/a/b', 'http://x.example/y']);
  });
});

describe('extractUrls: CSS url( in style attributes and style sheets', () => {
  const attr = (css: string) => `<div style='${css}'>a</div>`;
  bounded([
    {
      name: 'two 256 KB style attributes of url(',
      work: () => extractUrls({ body_html: attr(run('url(', 256 * KB)).repeat(2) }),
    },
    {
      name: 'a style attribute of url( then 256 KB of spaces',
      work: () => extractUrls({ body_html: attr(`background:url(${run(' ', 256 * KB)}x`) }),
    },
    {
      name: 'a style attribute of 256 KB of url(x',
      work: () => extractUrls({ body_html: attr(run('url(x', 256 * KB)) }),
    },
    {
      name: 'a style attribute of 256 KB of url("',
      work: () => extractUrls({ body_html: `<div style="x">${attr(run('url("', 256 * KB))}` }),
    },
    {
      name: '2 MB of style attributes of url( then spaces',
      work: () => extractUrls({ body_html: run(attr(`url(${run(' ', 4 * KB)}`), 2 * MB) }),
    },
    {
      name: 'a style sheet of 1 MB of url(',
      work: () => extractUrls({ body_html: `<style>${run('url(', MB)}</style>` }),
    },
    {
      name: 'a style sheet of 1 MB of @import "',
      work: () => extractUrls({ body_html: `<style>${run('@import "', MB)}</style>` }),
    },
  ]);

  it('still finds the url() values', () => {
    const urls = extractUrls({
      body_html: `<div style="background:url( 'http://a.example/x.png' )">a</div><style>p{background:URL(http://b.example/y.png)} b{background:url("http://c.example/z")}</style>`,
    });
    expect(urls.map((u) => [u.url, u.source])).toEqual([
      ['http://a.example/x.png', 'css'],
      ['http://b.example/y.png', 'css'],
      ['http://c.example/z', 'css'],
    ]);
  });
});

describe('extractUrls and htmlToText: markup runs', () => {
  bounded([
    {
      name: '100 forms then 2 MB of <input',
      work: () => extractUrls({ body_html: `${run('<form>', 600)}${run('<input ', 2 * MB)}` }),
    },
    {
      name: 'a form of 2 MB of <input type',
      work: () => extractUrls({ body_html: `<form>${run('<input type ', 2 * MB)}` }),
    },
    {
      name: '200 links then 4000 <img',
      work: () =>
        extractUrls({
          body_html: `${run('<a href=http://x.example/>', 5000)}${run('<img ', 4000)}`,
        }),
    },
    {
      name: 'a meta refresh of 1 MB of url',
      work: () =>
        extractUrls({ body_html: `<meta http-equiv=refresh content="${run('url ', MB)}">` }),
    },
    { name: 'htmlToText of 2 MB of <', work: () => htmlToText(run('<', 2 * MB)) },
    { name: 'htmlToText of 2 MB of <a', work: () => htmlToText(run('<a ', 2 * MB)) },
    {
      name: 'htmlToText of 2 MB of </script',
      work: () => htmlToText(`<script>${run('</script ', 2 * MB)}`),
    },
    { name: 'htmlToText of 2 MB of &a', work: () => htmlToText(run('&a', 2 * MB)) },
    { name: 'htmlToText of 2 MB of blanks', work: () => htmlToText(`a${run(' \n', 2 * MB)}b`) },
    {
      name: 'a text/html body of 2 MB of <',
      work: () => parseRawEmail(`${HEAD}Content-Type: text/html\r\n\r\n${run('<', 2 * MB)}\r\n`),
    },
  ]);

  it('a form with a password input is still seen as one', () => {
    const [form] = extractUrls({
      body_html:
        '<form action="https://x.example/p"><input name=u><input\n type = "password"></form>',
    });
    expect(form?.formHasPassword).toBe(true);
  });
});

describe('sniffAttachment: HTML features of an 8 MB attachment', () => {
  const html = (unit: string) => Buffer.from(`<html>${run(unit, 8 * MB)}`);
  bounded([
    { name: '8 MB of <input', work: () => sniffAttachment(html('<input '), 'a.html') },
    { name: '8 MB of <meta', work: () => sniffAttachment(html('<meta '), 'a.html') },
    { name: '8 MB of <input type=', work: () => sniffAttachment(html('<input type= '), 'a.html') },
  ]);

  it('still counts password inputs and sees a meta refresh', () => {
    const s = sniffAttachment(
      Buffer.from(
        '<html><meta http-equiv="refresh" content="0;url=x"><input type=password><input TYPE="password"><input type=text></html>',
      ),
      'a.html',
    );
    expect(s.htmlFeatures?.passwordInputs).toBe(2);
    expect(s.htmlFeatures?.metaRefresh).toBe(true);
  });
});

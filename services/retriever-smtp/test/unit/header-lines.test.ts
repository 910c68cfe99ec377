import { describe, expect, it } from 'vitest';
import { editHeaders, oneLineValue, splitHeader, valueLines } from '../../src/index.ts';

/** The header lines a mail server reads in `out`: split at every CR, LF or CRLF. */
const serverLines = (out: Buffer) => {
  const all = out.toString('latin1').split(/\r\n|\r|\n/);
  return all.slice(0, all.indexOf(''));
};

describe('header line ends (issue 28: forged tags hidden behind a bare CR)', () => {
  it('a bare CR cannot hide a forged X-Trawl-Verdict behind the Subject', () => {
    const raw = Buffer.from(
      'From: a@example.org\r\nSubject: Password expiry\rX-Trawl-Verdict: clean\rX-Trawl-Score: 0.001\r\n\r\nbody\r\n',
    );
    const out = editHeaders(raw, { add: [['X-Trawl-Verdict', 'phishing']] });
    expect(out.toString('latin1')).toBe(
      'X-Trawl-Verdict: phishing\r\nFrom: a@example.org\r\nSubject: Password expiry\r\n\r\nbody\r\n',
    );
    expect(serverLines(out).filter((l) => /^x-trawl-/i.test(l))).toEqual([
      'X-Trawl-Verdict: phishing',
    ]);
  });

  it('reads CR, LF and CRLF alike, and writes no bare CR in the header', () => {
    const raw = Buffer.from('A: 1\rX-Trawl-Job: x\nB: 2\r\n folded\rX-TRAWL-SCORE: 0\r\rbody\r');
    const out = editHeaders(raw, { add: [['X-Trawl-Verdict', 'clean']] });
    expect(out.toString('latin1')).toBe(
      'X-Trawl-Verdict: clean\r\nA: 1\r\nB: 2\r\n folded\r\n\r\nbody\r',
    );
  });

  it('a bare CR before a space or tab is a continuation line, not a field', () => {
    const raw = Buffer.from('Subject: a\r X-Trawl-Verdict: clean\r\n\r\n');
    const block = splitHeader(raw);
    expect(block.fields.map((f) => f.name)).toEqual(['subject']);
    expect(block.fields[0]?.lines.map((l) => l.toString())).toEqual([
      'Subject: a',
      ' X-Trawl-Verdict: clean',
    ]);
  });

  it('an empty line made of bare CRs ends the header as it does for a mail server', () => {
    const block = splitHeader(Buffer.from('Subject: a\r\rX-Trawl-Verdict: clean\r\n'));
    expect(block.fields.map((f) => f.name)).toEqual(['subject']);
    expect(block.bodyStart).toBe('Subject: a\r\r'.length);
  });

  it('splits a milter header value where a server would break it', () => {
    expect(valueLines('Password expiry\rX-Trawl-Verdict: clean\r\n next')).toEqual([
      'Password expiry',
      'X-Trawl-Verdict: clean',
      ' next',
    ]);
    expect(valueLines('plain')).toEqual(['plain']);
    expect(oneLineValue('a\rb\nc\x00d')).toBe('a b c d');
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hostileMessage, hostileText } from '../../../../test/support/hostile-arbitraries.ts';
import { editHeaders, splitHeader } from '../../src/index.ts';

/**
 * Property tests of the SMTP filter's header path (issue 28): whatever the message, the rewrite
 * never throws, the mailbox (reading CR, LF and CRLF alike) sees exactly the filter's X-Trawl-*
 * fields, the header holds no bare CR, the body passes byte for byte and the output is bounded.
 */

const TAGS: [string, string][] = [
  ['X-Trawl-Verdict', 'phishing'],
  ['X-Trawl-Score', '0.900'],
  ['X-Trawl-Job', 'job-1'],
];

/** The header lines of `out` as a mail server reads them, up to the first empty line. */
function serverHeaderLines(out: Buffer): string[] {
  const lines = out.toString('latin1').split(/\r\n|\r|\n/);
  const end = lines.indexOf('');
  return end < 0 ? lines : lines.slice(0, end);
}

describe('fuzz: the SMTP filter header rewrite', () => {
  it('shows the mailbox only the filter tags, writes no bare CR, keeps the body, stays bounded', () => {
    fc.assert(
      fc.property(
        hostileMessage,
        fc.option(hostileText(4), { nil: undefined }),
        hostileText(4),
        (raw, prefix, recipients) => {
          const add: [string, string][] = [...TAGS, ['X-Trawl-Original-Recipients', recipients]];
          const out = editHeaders(raw, { add, subjectPrefix: prefix });
          const trawl = serverHeaderLines(out).filter((l) => /^x-trawl-/i.test(l));
          expect(trawl.map((l) => l.slice(0, l.indexOf(':')))).toEqual(add.map(([n]) => n));
          // the body: the input's bytes after its header, as they were
          const { bodyStart } = splitHeader(raw);
          const body = bodyStart < 0 ? Buffer.alloc(0) : raw.subarray(bodyStart);
          expect(out.subarray(out.length - body.length).equals(body)).toBe(true);
          // the header written: every CR is part of a CRLF
          const head = out.subarray(0, out.length - body.length);
          for (let i = head.indexOf(13); i >= 0; i = head.indexOf(13, i + 1)) {
            expect(head[i + 1]).toBe(10);
          }
          const added = add.reduce((n, [k, v]) => n + k.length + v.length * 4 + 4, 0);
          expect(out.length).toBeLessThanOrEqual(
            2 * raw.length + added + 4 * (prefix?.length ?? 0) + 64,
          );
        },
      ),
      { numRuns: 400 },
    );
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { multipartDeeperThan, multipartDepth } from '../../src/mime-depth.ts';

function nested(depth: number, filler = ''): Buffer {
  let open = '';
  let close = '';
  for (let i = 0; i < depth; i++) {
    open += `Content-Type: multipart/mixed; boundary="b${i}"\r\n\r\n${filler}--b${i}\r\n`;
    close = `\r\n--b${i}--\r\n${close}`;
  }
  return Buffer.from(`Subject: x\r\n${open}Content-Type: text/plain\r\n\r\ninside${close}`);
}

describe('multipartDeeperThan', () => {
  it.each([0, 1, 5, 6, 7, 40])('agrees with multipartDepth for %i levels (limit 6)', (levels) => {
    for (const filler of ['', 'see https://example.com/part/of/it/ and text/html\r\n']) {
      const raw = nested(levels, filler);
      expect(multipartDeeperThan(raw, 6)).toBe(multipartDepth(raw, 6) > 6);
    }
  });

  it('agrees with multipartDepth on any mix of declarations, delimiters and noise', () => {
    const line = fc.oneof(
      fc.integer({ min: 0, max: 4 }).map((b) => `Content-Type: Multipart/mixed; boundary=b${b}`),
      fc
        .integer({ min: 0, max: 4 })
        .map((b) => `CONTENT-TYPE: MULTIPART/ALTERNATIVE;\r\n boundary="b${b}"`),
      fc.integer({ min: 0, max: 4 }).map((b) => `--b${b}`),
      fc.integer({ min: 0, max: 4 }).map((b) => `--b${b}--`),
      fc.constantFrom('text/plain', 'a t/ b T/', '', 'body'),
    );
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 60 }),
        fc.integer({ min: 0, max: 8 }),
        (lines, limit) => {
          const raw = Buffer.from(lines.join('\r\n'), 'latin1');
          expect(multipartDeeperThan(raw, limit)).toBe(multipartDepth(raw, limit) > limit);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

import { BadInputError } from '@trawl/contracts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hostileText } from '../../../../test/support/hostile-arbitraries.ts';
import { decodeCursor, encodeCursor } from '../../src/store/cursor.ts';

/**
 * Property tests of the page cursor (issue 28): a cursor is outside input (a query parameter);
 * whatever it holds, decodeCursor answers the sort key it was made from, or refuses it with its
 * own 400, never anything else, and never a part longer than its bound.
 */
describe('fuzz: page cursors', () => {
  it('a hostile cursor is a bounded sort key or a BadInputError naming /cursor', () => {
    const cursor = fc.oneof(
      hostileText(12),
      // valid base64url of hostile JSON-ish text: past the base64 step, into JSON.parse
      hostileText(12).map((t) => Buffer.from(t, 'utf8').toString('base64url')),
      fc
        .array(fc.oneof(hostileText(4), fc.integer()), { maxLength: 4 })
        .map((a) => encodeCursor(a)),
    );
    fc.assert(
      fc.property(cursor, fc.integer({ min: 1, max: 3 }), (c, arity) => {
        try {
          const parts = decodeCursor(c, arity);
          expect(parts).toHaveLength(arity);
          for (const p of parts) expect(p.length).toBeLessThan(200);
        } catch (err) {
          expect(err).toBeInstanceOf(BadInputError);
          expect((err as BadInputError).problems?.[0]?.path).toBe('/cursor');
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('what it encodes, it decodes', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ minLength: 1, maxLength: 50 }), { minLength: 1, maxLength: 3 }),
        (parts) => {
          expect(decodeCursor(encodeCursor(parts), parts.length)).toEqual(parts);
        },
      ),
      { numRuns: 300 },
    );
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hostileText } from '../../../../test/support/hostile-arbitraries.ts';
import { JobSearchQuery, searchFiltersOf, TERM_MAX_CHARS } from '../../src/index.ts';

/** Every filter the route takes (and hostile names beside them). */
const KEYS = Object.keys(JobSearchQuery.shape);

/**
 * Property tests of the search filters of GET /api/v1/analyze (issue 28): a hostile query is parsed
 * (a 422 naming the fields) or refused, never thrown; a query it accepts becomes store filters whose
 * terms are bounded.
 */
describe('fuzz: job search filters', () => {
  it('parses or refuses; accepted filters are bounded terms', () => {
    const query = fc.dictionary(
      fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...KEYS) }, hostileText(3)),
      hostileText(10),
      { maxKeys: 6 },
    );
    fc.assert(
      fc.property(query, (q) => {
        const r = JobSearchQuery.safeParse(q);
        if (!r.success) {
          expect(r.error.issues.length).toBeGreaterThan(0);
          return;
        }
        const f = searchFiltersOf(r.data);
        for (const t of f.terms ?? []) expect(t.length).toBeLessThanOrEqual(TERM_MAX_CHARS + 32);
      }),
      { numRuns: 1000 },
    );
  });
});

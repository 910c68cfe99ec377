import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Email, ISO_639_1, parseWith, Workflow } from '../../src/index.ts';

const label = fc.stringMatching(/^[a-z][a-z0-9_]{0,15}$/);
const address = fc
  .tuple(
    fc.stringMatching(/^[a-z][a-z0-9._-]{0,20}[a-z0-9]$/),
    fc.stringMatching(/^[a-z][a-z0-9-]{0,20}[a-z0-9]$/),
    fc.constantFrom('com', 'org', 'de', 'com.br', 'nl'),
  )
  .map(([l, d, t]) => `${l.replace(/\.\.+/g, '.')}@${d}.${t}`);
const isoDate = fc
  .date({
    min: new Date('1990-01-01T00:00:00Z'),
    max: new Date('2090-01-01T00:00:00Z'),
    noInvalidDate: true,
  })
  .map((d) => d.toISOString());

const emailArb = fc.record(
  {
    headers: fc.record(
      {
        subject: fc.string({ maxLength: 200 }),
        sender: address,
        recipients: fc.array(address, { minLength: 1, maxLength: 5 }),
        cc: fc.array(address, { maxLength: 3 }),
        date: isoDate,
        raw_headers: fc.dictionary(
          label,
          fc.oneof(fc.string(), fc.array(fc.string(), { maxLength: 3 })),
        ),
      },
      { requiredKeys: ['subject', 'sender', 'recipients', 'date'] },
    ),
    body_text: fc.string({ maxLength: 500 }),
    body_html: fc.string({ maxLength: 500 }),
    language: fc.constantFrom(...ISO_639_1),
    source: fc.string({ maxLength: 50 }),
    attachments: fc.array(
      fc.record({
        filename: fc.string({ maxLength: 40 }),
        content_type: fc.constant('application/pdf'),
        content: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b).toString('base64')),
      }),
      { maxLength: 3 },
    ),
  },
  { requiredKeys: ['headers', 'body_text'] },
);

const stageName = fc.stringMatching(/^[a-z][a-z0-9_]{0,10}$/);
const analyzerRef = fc.record(
  {
    id: stageName,
    weight: fc.double({ min: 0, max: 1, noNaN: true }),
    timeout_ms: fc.integer({ min: 1, max: 60000 }),
    required: fc.boolean(),
    failure_strategy: fc.constantFrom('skip', 'retry', 'fail'),
    retry_config: fc.record({
      max_attempts: fc.integer({ min: 1, max: 5 }),
      backoff_ms: fc.nat(1000),
      max_backoff_ms: fc.nat(10000),
      exponential_backoff: fc.boolean(),
    }),
  },
  { requiredKeys: ['id'] },
);
const workflowArb = fc.uniqueArray(stageName, { minLength: 1, maxLength: 5 }).chain((names) =>
  fc.record(
    {
      id: stageName,
      name: fc.string({ minLength: 1, maxLength: 30 }),
      version: fc.nat(10),
      timeout_ms: fc.integer({ min: 1, max: 600000 }),
      max_parallel_analyzers: fc.integer({ min: 1, max: 32 }),
      confidence_threshold: fc.double({ min: 0, max: 1, noNaN: true }),
      stages: fc.tuple(
        ...names.map((name, i) =>
          fc.record({
            name: fc.constant(name),
            type: fc.constantFrom('parallel', 'sequential'),
            depends_on: fc.subarray(names.slice(0, i)),
            aggregation_method: fc.constantFrom(
              'weighted_average',
              'max_confidence',
              'majority_vote',
            ),
            analyzers: fc.uniqueArray(analyzerRef, {
              minLength: 1,
              maxLength: 4,
              selector: (a) => a.id,
            }),
          }),
        ),
      ),
    },
    { requiredKeys: ['id', 'name', 'stages'] },
  ),
);

describe('generated valid shapes', () => {
  it('every generated valid Email passes and round-trips through JSON', () => {
    fc.assert(
      fc.property(emailArb, (e) => {
        const first = parseWith(Email, e);
        expect(first.ok ? [] : first.problems).toEqual([]);
        if (!first.ok) return;
        const again = parseWith(Email, JSON.parse(JSON.stringify(first.value)));
        expect(again.ok).toBe(true);
        if (again.ok) expect(again.value).toEqual(first.value);
      }),
      { numRuns: 300 },
    );
  });

  it('every generated valid workflow passes and round-trips through JSON', () => {
    fc.assert(
      fc.property(workflowArb, (w) => {
        const first = parseWith(Workflow, w);
        expect(first.ok ? [] : first.problems).toEqual([]);
        if (!first.ok) return;
        const again = parseWith(Workflow, JSON.parse(JSON.stringify(first.value)));
        expect(again.ok).toBe(true);
        if (again.ok) expect(again.value).toEqual(first.value);
      }),
      { numRuns: 300 },
    );
  });
});

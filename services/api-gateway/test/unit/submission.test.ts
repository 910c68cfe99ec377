import { emailParser } from '@trawl/contracts';
import { describe, expect, it } from 'vitest';
import { submissionParser } from '../../src/submission.ts';
import { sampleEmail } from '../fixtures/email.ts';

describe('submissionParser', () => {
  it('answers exactly as the submission schema, valid or not', () => {
    const p = submissionParser(emailParser());
    const e = sampleEmail();
    const bodies: unknown[] = [
      { email: e },
      { email: e, workflow_id: 'quick' },
      { workflow_id: 'quick', email: e, extra: true },
      { email: e, workflow_id: '' },
      { email: e, workflow_id: 'w'.repeat(128) },
      { email: e, workflow_id: 'w'.repeat(129) },
      { email: e, workflow_id: 7 },
      { email: e, workflow_id: null },
      { email: { ...e, headers: { ...e.headers, sender: 'nope' } }, workflow_id: '' },
      { email: { ...e, analysis_context: { s: 1 } } },
      { email: { ...e, attachments: [{ filename: 'a', content: 'aGk=' }] } },
      { email: null },
      {},
      [],
      'text',
      null,
      Object.create(null),
    ];
    for (const body of bodies) {
      const fast = p.safeParse(body);
      const zod = p.schema.safeParse(body);
      expect(fast.success, JSON.stringify(body)).toBe(zod.success);
      if (fast.success && zod.success) expect(fast.data).toStrictEqual(zod.data);
      else expect(fast.error?.issues).toEqual(zod.error?.issues);
    }
  });
});

import { describe, expect, it } from 'vitest';
import { AnalysisRequestMessage, parseWith } from '../../src/index.ts';

const email = {
  headers: {
    subject: 'Your invoice',
    sender: 'billing@example.com',
    recipients: ['alice@example.org'],
    date: '2024-05-01T10:00:00Z',
  },
  body_text: 'Please find the invoice attached.',
};

const claimCheck = {
  job_id: '6f1c2a4e-8b1d-4c3e-9a2f-0d5e7b9c1a3f',
  email_id: 'em_0123',
  workflow_id: 'default',
  submitted_at: '2026-11-22T10:00:00.000Z',
};

describe('AnalysisRequestMessage (claim check, ADR 005)', () => {
  it('accepts a message without the Email: the job row holds it', () => {
    const r = parseWith(AnalysisRequestMessage, {
      ...claimCheck,
      origin: { retriever: 'imap', message_id: '<m@x>' },
    });
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.value.email).toBeUndefined();
  });

  it('still accepts a message of an older gateway carrying the Email, and validates it', () => {
    const r = parseWith(AnalysisRequestMessage, { ...claimCheck, email });
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.value.email?.headers.subject).toBe('Your invoice');
    const bad = parseWith(AnalysisRequestMessage, { ...claimCheck, email: { headers: {} } });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.problems.some((p) => p.path.startsWith('/email/'))).toBe(true);
  });

  it('still requires the job id, email id and workflow id', () => {
    const r = parseWith(AnalysisRequestMessage, { submitted_at: claimCheck.submitted_at });
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.problems.map((p) => p.path).sort()).toEqual([
        '/email_id',
        '/job_id',
        '/workflow_id',
      ]);
  });
});

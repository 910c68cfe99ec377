import type { Email } from '@trawl/contracts';

/** A plain, harmless Email the unit tests of the orchestrator and of investigation start from. */
export const sampleEmail: Email = {
  headers: {
    subject: 'Your invoice',
    sender: 'billing@example.com',
    recipients: ['alice@example.org'],
    date: '2024-05-01T10:00:00Z',
  },
  body_text: 'Please find the invoice attached.',
  analysis_context: {},
};

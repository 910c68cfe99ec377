import type { Email } from '@trawl/contracts';

/** The message both engine benchmarks (run.ts, overhead.ts) analyse: a plain credential lure. */
export const BENCH_EMAIL: Email = {
  headers: {
    subject: 'Your account will be suspended',
    sender: 'security@examp1e-bank.com',
    recipients: ['alice@example.org'],
    date: '2024-05-01T10:00:00Z',
  },
  body_text: 'Dear customer, please verify your account at the link below. '.repeat(30),
  analysis_context: {},
};

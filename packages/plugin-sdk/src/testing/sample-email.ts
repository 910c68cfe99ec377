import type { EmailInput } from '@trawl/contracts';

/** A small, valid Email used by the conformance suite when the author gives none. */
export const SAMPLE_EMAIL: EmailInput = {
  headers: {
    subject: 'Your mailbox is almost full: verify your account',
    sender: 'it-support@examp1e-mail.com',
    recipients: ['alice@example.org'],
    date: '2024-05-01T09:30:00Z',
    raw_headers: {
      from: 'IT Support <it-support@examp1e-mail.com>',
      'reply-to': 'helpdesk@other.example.net',
    },
  },
  body_text:
    'Dear user, your mailbox will be closed within 24 hours. Verify your password at ' +
    'http://examp1e-mail.com/login to keep your account.',
  body_html:
    '<p>Dear user, your mailbox will be closed within 24 hours.</p>' +
    '<a href="http://examp1e-mail.com/login">https://example.org/account</a>',
  attachments: [],
  analysis_context: {},
};

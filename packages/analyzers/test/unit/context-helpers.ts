import { Email, type EmailInput } from '@trawl/contracts';

/** An Email with the given sender, display name and body, and optional provider data. */
export function mail(opts: {
  sender: string;
  displayName?: string;
  subject?: string;
  body?: string;
  recipients?: string[];
  providers?: Record<string, unknown>;
}): Email {
  const input: EmailInput = {
    headers: {
      subject: opts.subject ?? 'Hello',
      sender: opts.sender,
      recipients: opts.recipients ?? ['someone@example.org'],
      date: '2024-05-01T09:30:00Z',
      raw_headers: {
        from: opts.displayName ? `"${opts.displayName}" <${opts.sender}>` : opts.sender,
      },
    },
    body_text: opts.body ?? 'Hi, see you tomorrow.',
    analysis_context: opts.providers
      ? { enrich: { providers: opts.providers, analyzers: {} } }
      : {},
  };
  return Email.parse(input);
}

import type { Email } from '@trawl/contracts';
import { MIN_TEXT_SIMILARITY, signatureSimilarity } from '@trawl/platform';
import { describe, expect, it } from 'vitest';
import { buildEvidence, lureOf, textSignature } from '../../src/index.ts';
import { email } from './helpers.ts';

const LURE_TEXT = `Dear Alice,
We detected unusual sign-in activity on your mailbox and have temporarily suspended incoming
messages. To restore full access you must confirm your account details within 24 hours, otherwise
your mailbox will be permanently deactivated and all stored messages will be deleted from our
servers. Click the secure link below to verify your identity and keep your account active.
Thank you for your prompt attention to this matter.
IT Service Desk`;

function message(o: { to: string; text?: string; html?: string; from?: string }): Email {
  return {
    ...email,
    headers: {
      ...email.headers,
      sender: o.from ?? 'helpdesk@lure-sender.example',
      recipients: [o.to],
    },
    ...(o.text !== undefined ? { body_text: o.text } : { body_text: undefined }),
    ...(o.html !== undefined ? { body_html: o.html } : {}),
  } as Email;
}

const lure = (m: Email) => lureOf(m, buildEvidence(m));

describe('campaign lure keys', () => {
  it('keys a phishing domain, not the sender own domain, the recipients domain or big platforms', () => {
    const m = message({
      to: 'alice@corp.example',
      from: 'news@shop.example',
      html: [
        '<a href="https://login.evil-verify.example/a">verify</a>',
        '<a href="https://www.shop.example/offers">shop</a>',
        '<a href="https://intranet.corp.example/">intranet</a>',
        '<a href="https://www.google.com/">google</a>',
        '<a href="https://docs.google.com/forms/d/e/1FAIpQLSfake/viewform">form</a>',
      ].join(' '),
    });
    const keys = lure(m).keys.filter((k) => !k.startsWith('txt'));
    expect(keys).toEqual([
      'dom:evil-verify.example',
      'url:docs.google.com/forms/d/e/1FAIpQLSfake/viewform',
    ]);
  });

  it('keys attachments by sha256 but not inline images', () => {
    const m: Email = {
      ...message({ to: 'a@corp.example', text: 'see attached' }),
      attachments: [
        {
          filename: 'invoice.html',
          content_type: 'text/html',
          content: Buffer.from('<p>pay</p>').toString('base64'),
        },
        {
          filename: 'logo.png',
          content_type: 'image/png',
          content_id: 'logo@x',
          content: Buffer.from('\x89PNG\r\n\x1a\n0000').toString('base64'),
        },
      ],
    } as Email;
    const keys = lure(m).keys;
    expect(keys.filter((k) => k.startsWith('sha:'))).toHaveLength(1);
  });

  it('a near-identical text (another name, another amount, another link) is alike; another text is not', () => {
    const a = textSignature(LURE_TEXT) as string;
    const b = textSignature(
      LURE_TEXT.replace('Dear Alice', 'Dear Robert')
        .replace('24 hours', '48 hours')
        .replace('secure link below', 'secure link https://restore-now.example/r below'),
    ) as string;
    const other =
      textSignature(`Hi team, the quarterly report is attached. Please review the figures
      for the northern region before Thursday's meeting; the budget review moved to Friday
      afternoon and the catering order needs a final head count from each department lead.`) as string;
    expect(a).toMatch(/^[0-9a-f]{256}$/);
    expect(signatureSimilarity(a, b)).toBeGreaterThanOrEqual(MIN_TEXT_SIMILARITY);
    expect(signatureSimilarity(a, other)).toBeLessThan(0.2);
    // the four bands are keys: the variant shares at least one with the original
    const ka = lure(message({ to: 'a@corp.example', text: LURE_TEXT })).keys;
    const kb = lure(
      message({ to: 'b@corp.example', text: LURE_TEXT.replace('Dear Alice', 'Dear Robert') }),
    ).keys;
    expect(ka.filter((k) => k.startsWith('txt') && kb.includes(k)).length).toBeGreaterThan(0);
  });

  it('a short text has no text key (short texts are alike by chance)', () => {
    expect(textSignature('Please find the invoice attached.')).toBeUndefined();
    expect(lure(message({ to: 'a@corp.example', text: 'Call me.' })).signature).toBeUndefined();
  });

  it('reads the text of an HTML-only message', () => {
    const html = `<div><p>${LURE_TEXT.replace(/\n/g, '</p><p>')}</p></div>`;
    const k = lure(message({ to: 'a@corp.example', html }));
    expect(k.signature).toBeDefined();
    expect(
      signatureSimilarity(k.signature as string, textSignature(LURE_TEXT) as string),
    ).toBeGreaterThanOrEqual(MIN_TEXT_SIMILARITY);
  });
});

/**
 * Issue 32, "links wherever they are": the attachments analyzer reports the links inside PDF,
 * Office, calendar and QR-code attachments (document_urls), the urls analyzer judges them like the
 * body's links, and the threat-intel provider looks up what an earlier stage reported.
 */
import { documentLinksIn, type Email } from '@trawl/contracts';
import { describe, expect, it } from 'vitest';
import { docx, ics, pdf, qrPng } from '../../../mail/test/document-fixtures.ts';
import { AttachmentsSettings, analyzeAttachments } from '../../src/attachments/index.ts';
import { observe } from '../../src/threat-intel/observe.ts';
import { analyzeUrls, UrlsSettings } from '../../src/urls/index.ts';
import { makeEmail } from '../fixtures/emails.ts';

const attachments = AttachmentsSettings.parse({});
const urls = UrlsSettings.parse({});

function withFiles(files: { filename: string; content: Buffer | string; content_type: string }[]) {
  return makeEmail({ text: 'Please see the attached documents.', attachments: files });
}

const lure = () =>
  withFiles([
    {
      filename: 'refund.pdf',
      content: pdf({ compressed: ['http://198.51.100.20/claim'] }),
      content_type: 'application/pdf',
    },
    { filename: 'scan.png', content: qrPng('https://bit.ly/abc123'), content_type: 'image/png' },
    {
      filename: 'meeting.ics',
      content: ics(['DESCRIPTION:Join: https://paypal.com.account-check.example/x']),
      content_type: 'text/calendar',
    },
    {
      filename: 'form.docx',
      content: docx({ links: ['https://portal.example.org/'] }),
      content_type: 'application/octet-stream',
    },
  ]);

describe('links inside attachments in the analyzers', () => {
  it('the attachments analyzer reports every link with its source and attachment', () => {
    const a = analyzeAttachments(lure(), attachments);
    const links = documentLinksIn({ offline: { analyzers: { attachments: a } } });
    expect(links).toEqual([
      {
        url: 'http://198.51.100.20/claim',
        source: 'pdf',
        attachment: 0,
        attachment_name: 'refund.pdf',
      },
      { url: 'https://bit.ly/abc123', source: 'qr', attachment: 1, attachment_name: 'scan.png' },
      {
        url: 'https://paypal.com.account-check.example/x',
        source: 'calendar',
        attachment: 2,
        attachment_name: 'meeting.ics',
      },
      {
        url: 'https://portal.example.org/',
        source: 'office',
        attachment: 3,
        attachment_name: 'form.docx',
      },
    ]);
  });

  it('the urls analyzer judges them with the body-link techniques, saying where', () => {
    const r = analyzeUrls(lure(), urls);
    const values = (r.indicators ?? []).map((i) => `${i.type}: ${i.value}`);
    expect(values).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^ip_url: .*198\.51\.100\.20.* in PDF \(refund\.pdf\)$/),
        expect.stringMatching(/^url_shortener: .*bit\.ly.* in QR code \(scan\.png\)$/),
        expect.stringMatching(/paypal.* in calendar invitation \(meeting\.ics\)$/),
      ]),
    );
    expect(r.analyzer_details?.document_url_count).toBe(4);
  });

  it('a link inside an ordinary invoice PDF raises nothing (a link in a PDF is normal)', () => {
    const e = withFiles([
      {
        filename: 'invoice-2026-03.pdf',
        content: pdf({ plain: ['https://billing.example.com/invoices/2026-03'] }),
        content_type: 'application/pdf',
      },
    ]);
    expect(analyzeUrls(e, urls).indicators).toEqual([]);
    expect(analyzeAttachments(e, attachments).indicators).toEqual([]);
  });

  it('threat-intel looks up the links an earlier stage reported, never decoding itself', () => {
    const a = analyzeAttachments(lure(), attachments);
    const email: Email = { ...makeEmail({ text: 'no links here' }), analysis_context: {} };
    expect(observe(email, 100).urls).toEqual([]);
    const later: Email = {
      ...email,
      analysis_context: { offline: { providers: {}, analyzers: { attachments: a } } },
    };
    expect(observe(later, 100).urls.map((u) => u.written)).toEqual([
      'http://198.51.100.20/claim',
      'https://bit.ly/abc123',
      'https://paypal.com.account-check.example/x',
      'https://portal.example.org/',
    ]);
  });
});

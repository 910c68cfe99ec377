import { describe, expect, it } from 'vitest';
import { extractReportedMail, findInlineForward, parseRawEmail } from '../../src/index.ts';
import { buildMsg } from '../cfb-writer.ts';

const REPORTER = 'Reporter.Person@corp.example';

const ORIGINAL = [
  'From: "Microsoft 365" <no-reply@m365-verify.example>',
  'To: reporter.person@corp.example',
  'Subject: Password expires today',
  'Date: Mon, 2 Nov 2026 09:00:00 +0000',
  'Message-ID: <orig-1@m365-verify.example>',
  '',
  'Keep your password: http://m365-verify.example/keep',
  '',
].join('\r\n');

function wrapper(parts: string[], text = 'Is this phishing?'): Buffer {
  return Buffer.from(
    [
      `From: Reporter Person <${REPORTER}>`,
      'To: phishing-reports@corp.example',
      'Subject: FW: Password expires today',
      'Date: Mon, 2 Nov 2026 10:00:00 +0000',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="W"',
      '',
      '--W',
      'Content-Type: text/plain; charset=utf-8',
      '',
      text,
      ...parts.flatMap((p) => ['--W', p]),
      '--W--',
      '',
    ].join('\r\n'),
  );
}

async function report(raw: Buffer) {
  return extractReportedMail(await parseRawEmail(raw));
}

describe('reported-mail triage', () => {
  it('analyses an attached message/rfc822, with the reporter kept apart', async () => {
    const r = await report(wrapper([`Content-Type: message/rfc822\r\n\r\n${ORIGINAL}`]));
    expect(r.found).toBe('rfc822');
    expect(r.reporter).toBe(REPORTER.toLowerCase());
    expect(r.wrapper_subject).toBe('FW: Password expires today');
    expect(r.email.headers.sender).toBe('no-reply@m365-verify.example');
    expect(r.email.headers.subject).toBe('Password expires today');
    expect(r.email.body_text).toContain('http://m365-verify.example/keep');
    expect(r.email).toEqual(
      await parseRawEmail(ORIGINAL, { envelope: { to: [REPORTER.toLowerCase()] } }),
    );
  });

  it('analyses an attached .eml (sent as application/octet-stream)', async () => {
    const b64 = Buffer.from(ORIGINAL).toString('base64');
    const r = await report(
      wrapper([
        `Content-Type: application/octet-stream; name="Password expires.eml"\r\nContent-Disposition: attachment; filename="Password expires.eml"\r\nContent-Transfer-Encoding: base64\r\n\r\n${b64}`,
      ]),
    );
    expect(r.found).toBe('eml');
    expect(r.email.headers.sender).toBe('no-reply@m365-verify.example');
  });

  it('analyses an attached Outlook .msg', async () => {
    const msg = buildMsg({
      subject: 'Password expires today',
      fromName: 'Microsoft 365',
      fromAddress: 'no-reply@m365-verify.example',
      to: [{ address: 'reporter.person@corp.example' }],
      text: 'Keep your password: http://m365-verify.example/keep',
      date: new Date('2026-11-02T09:00:00Z'),
    });
    const r = await report(
      wrapper([
        `Content-Type: application/vnd.ms-outlook; name="Password expires today.msg"\r\nContent-Disposition: attachment; filename="Password expires today.msg"\r\nContent-Transfer-Encoding: base64\r\n\r\n${msg.toString('base64')}`,
      ]),
    );
    expect(r.found).toBe('msg');
    expect(r.email.headers.sender).toBe('no-reply@m365-verify.example');
    expect(r.email.headers.date).toBe('2026-11-02T09:00:00.000Z');
  });

  it('reads an Outlook inline forward (From / Sent / To / Subject, mailto: brackets)', async () => {
    const text = [
      'Looks odd to me.',
      '',
      'Reporter',
      '',
      '-----Original Message-----',
      'From: Microsoft 365 [mailto:no-reply@m365-verify.example]',
      'Sent: Monday, November 2, 2026 9:00 AM',
      `To: Reporter Person <${REPORTER}>`,
      'Subject: Password expires today',
      '',
      'Keep your password: http://m365-verify.example/keep',
    ].join('\r\n');
    const r = await report(wrapper([], text));
    expect(r.found).toBe('inline');
    expect(r.email.headers.sender).toBe('no-reply@m365-verify.example');
    expect(r.email.headers.subject).toBe('Password expires today');
    expect(r.email.headers.date).toBe('2026-11-02T09:00:00.000Z');
    expect(r.email.headers.recipients).toEqual([REPORTER]);
    expect(r.email.body_text).toBe('Keep your password: http://m365-verify.example/keep');
    expect(r.email.body_text).not.toContain('Looks odd');
  });

  it('reads Gmail and Apple Mail forwards', () => {
    const gmail = findInlineForward(
      [
        'fyi',
        '',
        '---------- Forwarded message ---------',
        'From: Microsoft 365 <no-reply@m365-verify.example>',
        'Date: Mon, Nov 2, 2026 at 9:00 AM',
        'Subject: Password expires today',
        'To: <reporter.person@corp.example>',
        '',
        'Keep your password',
      ].join('\n'),
    );
    expect(gmail).toMatchObject({
      from: 'Microsoft 365 <no-reply@m365-verify.example>',
      subject: 'Password expires today',
      date: 'Mon, Nov 2, 2026 at 9:00 AM',
      body: 'Keep your password',
    });
    const apple = findInlineForward(
      [
        'Begin forwarded message:',
        '',
        'From: Microsoft 365 <no-reply@m365-verify.example>',
        'Subject: Password expires today',
        'Date: 2 November 2026 at 09:00:00 GMT',
        'To: reporter.person@corp.example',
        '',
        'Keep your password',
      ].join('\n'),
    );
    expect(apple?.from).toBe('Microsoft 365 <no-reply@m365-verify.example>');
    expect(apple?.body).toBe('Keep your password');
  });

  it('analyses the wrapper itself when no original is inside (found: none)', async () => {
    const raw = wrapper([], 'I got a strange call about my password.');
    const r = await report(raw);
    expect(r.found).toBe('none');
    expect(r.email).toEqual(await parseRawEmail(raw));
  });

  it('passes over an attached original that is not a message', async () => {
    const r = await report(wrapper(['Content-Type: message/rfc822\r\n\r\nnot a message at all']));
    expect(r.found).toBe('none');
  });
});

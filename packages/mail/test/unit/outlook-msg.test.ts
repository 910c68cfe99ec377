import { randomBytes } from 'node:crypto';
import { TrawlError } from '@trawl/contracts';
import { describe, expect, it } from 'vitest';
import { isOutlookMsg, outlookMsgToEml, parseRawEmail, readOutlookMsg } from '../../src/index.ts';
import { buildMsg, writeCfb } from '../cfb-writer.ts';

const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(6000, 0x41)]);

function sample(extra: Partial<Parameters<typeof buildMsg>[0]> = {}): Buffer {
  return buildMsg({
    subject: 'Your mailbox is full – action required',
    fromName: 'IT Helpdesk',
    fromAddress: 'helpdesk@mailbox-quota.example',
    to: [
      { name: 'Ann', address: 'ann@corp.example' },
      { address: 'bob@corp.example', type: 2 },
      { address: 'hidden@corp.example', type: 3 },
    ],
    text: 'Sign in at http://mailbox-quota.example/login within 24 hours.',
    html: '<p>Sign in at <a href="http://mailbox-quota.example/login">the portal</a></p>',
    date: new Date('2026-11-02T10:00:00Z'),
    attachments: [
      { filename: 'invoice.pdf', mime: 'application/pdf', content: pdf },
      { filename: 'note.txt', content: Buffer.from('small note') },
    ],
    ...extra,
  });
}

async function refusal(f: () => unknown): Promise<TrawlError> {
  try {
    await f();
  } catch (err) {
    return err as TrawlError;
  }
  throw new Error('expected a refusal');
}

describe('Outlook .msg', () => {
  it('reads subject, sender, recipients, date, bodies and attachments (mini and regular streams)', async () => {
    const buf = sample();
    expect(isOutlookMsg(buf)).toBe(true);
    const m = readOutlookMsg(buf);
    expect(m.subject).toBe('Your mailbox is full – action required');
    expect(m.from).toEqual({ name: 'IT Helpdesk', address: 'helpdesk@mailbox-quota.example' });
    expect(m.to.map((r) => r.address)).toEqual(['ann@corp.example']);
    expect(m.cc.map((r) => r.address)).toEqual(['bob@corp.example']);
    expect(m.attachments.map((a) => [a.filename, a.content.length])).toEqual([
      ['invoice.pdf', pdf.length],
      ['note.txt', 10],
    ]);
    const email = await parseRawEmail(outlookMsgToEml(buf));
    expect(email.headers.subject).toBe('Your mailbox is full – action required');
    expect(email.headers.sender).toBe('helpdesk@mailbox-quota.example');
    expect(email.headers.recipients).toEqual(['ann@corp.example']);
    expect(email.headers.cc).toEqual(['bob@corp.example']);
    expect(email.headers.date).toBe('2026-11-02T10:00:00.000Z');
    expect(email.body_text).toContain('http://mailbox-quota.example/login');
    expect(email.body_html).toContain('href="http://mailbox-quota.example/login"');
    expect(email.attachments?.map((a) => [a.filename, a.content_type, a.size])).toEqual([
      ['invoice.pdf', 'application/pdf', pdf.length],
      ['note.txt', 'text/plain', 10],
    ]);
    // the same .msg gives the same message
    expect(outlookMsgToEml(buf).equals(outlookMsgToEml(sample()))).toBe(true);
  });

  it('keeps the transport headers Outlook stored (Received, Authentication-Results), less their MIME fields', async () => {
    const headers = [
      'Received: from mx.mailbox-quota.example (203.0.113.9) by mx.corp.example; Mon, 2 Nov 2026 10:00:01 +0000',
      'Authentication-Results: mx.corp.example; spf=fail smtp.mailfrom=mailbox-quota.example',
      'From: "IT Helpdesk" <helpdesk@mailbox-quota.example>',
      'To: ann@corp.example',
      'Subject: Your mailbox is full',
      'Date: Mon, 2 Nov 2026 10:00:00 +0000',
      'Content-Type: multipart/alternative;',
      '\tboundary="old"',
      'MIME-Version: 1.0',
      '',
    ].join('\r\n');
    const email = await parseRawEmail(outlookMsgToEml(sample({ headers })));
    const raw = email.headers.raw_headers ?? {};
    expect(raw['authentication-results']).toContain('spf=fail');
    expect(raw.received).toBeDefined();
    expect(email.headers.subject).toBe('Your mailbox is full');
    expect(email.attachments).toHaveLength(2);
  });

  it('answers 422 for hostile or broken files, never a crash or a hang', async () => {
    const good = sample();
    const cases: [string, Buffer][] = [
      ['random bytes after the signature', Buffer.concat([good.subarray(0, 8), randomBytes(4096)])],
      ['truncated', good.subarray(0, 700)],
      ['header only', good.subarray(0, 512)],
      ['bad sector size', Buffer.from(good).fill(0x0d, 0x1e, 0x1f)],
    ];
    // a FAT whose chains loop on themselves: every FAT entry points at its own sector
    const loop = Buffer.from(good);
    for (let i = 0; i < 128; i++) loop.writeUInt32LE(i, 512 + i * 4);
    cases.push(['looping FAT chains', loop]);
    // a directory whose entries name each other as children (a cycle in the tree)
    const cyc = writeCfb([{ name: 'a', children: [{ name: 'b', data: Buffer.from('x') }] }]);
    const dirStart = cyc.readUInt32LE(0x30);
    const dir = 512 + dirStart * 512;
    cyc.writeUInt32LE(1, dir + 128 + 76); // entry 1 (storage a) is its own child
    cases.push(['directory cycle', cyc]);
    // a stream claiming more bytes than the file has
    const huge = Buffer.from(good);
    huge.writeUInt32LE(0x7fffffff, 512 + huge.readUInt32LE(0x30) * 512 + 128 + 120);
    cases.push(['stream larger than the file', huge]);
    // many attachment streams pointing at one long chain: reads bounded by the file, not quadratic
    const shared = buildMsg({
      subject: 's',
      attachments: [
        { filename: 'big.bin', content: Buffer.alloc(1 << 20, 1) },
        ...Array.from({ length: 150 }, (_, i) => ({
          filename: `a${i}.bin`,
          content: Buffer.alloc(4096, 2),
        })),
      ],
    });
    const dirAt = 512 + shared.readUInt32LE(0x30) * 512;
    const data = Buffer.from('__substg1.0_37010102', 'utf16le');
    let big = -1;
    for (let o = dirAt; o + 128 <= shared.length; o += 128) {
      if (!shared.subarray(o, o + data.length).equals(data)) continue;
      if (big < 0) big = shared.readUInt32LE(o + 116);
      else {
        shared.writeUInt32LE(big, o + 116);
        shared.writeUInt32LE(1 << 20, o + 120);
      }
    }
    cases.push(['streams sharing one long chain', shared]);
    for (const [what, buf] of cases) {
      const err = await refusal(async () => parseRawEmail(outlookMsgToEml(buf)));
      expect(err, what).toBeInstanceOf(TrawlError);
      expect(err.status, what).toBe(422);
    }
  });
});

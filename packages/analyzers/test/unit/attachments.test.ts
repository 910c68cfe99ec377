import { describe, expect, it } from 'vitest';
import { AttachmentsSettings, analyzeAttachments } from '../../src/attachments/index.ts';
import { hamColleague, makeEmail } from '../fixtures/emails.ts';

const settings = AttachmentsSettings.parse({});
const withFile = (
  filename: string,
  content: Buffer | string,
  content_type = 'application/octet-stream',
) => makeEmail({ text: 'see attached', attachments: [{ filename, content, content_type }] });
const types = (e: ReturnType<typeof makeEmail>) =>
  analyzeAttachments(e, settings).indicators?.map((i) => i.type) ?? [];

/** A minimal zip central directory listing one entry (no data needed for the listing). */
function zipListing(name: string): Buffer {
  const n = Buffer.from(name);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(n.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(n.length, 28);
  const cdOffset = local.length + n.length;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + n.length, 12);
  end.writeUInt32LE(cdOffset, 16);
  return Buffer.concat([local, n, central, n, end]);
}

describe('attachments analyzer', () => {
  it('raises nothing on a message without attachments', () => {
    expect(analyzeAttachments(hamColleague(), settings).indicators).toEqual([]);
  });

  it('raises nothing on an ordinary PDF and reports its sha256', () => {
    const a = analyzeAttachments(
      withFile('report.pdf', '%PDF-1.4\n1 0 obj<<>>endobj\n%%EOF', 'application/pdf'),
      settings,
    );
    expect(a.indicators).toEqual([]);
    const files = (a.analyzer_details?.attachments ?? []) as { sha256?: string }[];
    expect(files[0]?.sha256).toMatch(/^[a-f0-9]{64}$/);
  });

  it('flags dangerous extensions', () => {
    expect(types(withFile('setup.exe', 'MZ\x90\x00'))).toContain('dangerous_attachment');
  });

  it('flags double extensions', () => {
    expect(types(withFile('invoice.pdf.exe', 'MZ\x90\x00'))).toContain('double_extension');
  });

  it('flags macro-enabled documents', () => {
    expect(types(withFile('budget.xlsm', 'PK\x03\x04'))).toContain('macro_document');
  });

  it('flags executable content behind a harmless name', () => {
    const pe = Buffer.concat([Buffer.from('MZ'), Buffer.alloc(200)]);
    expect(types(withFile('photo.jpg', pe, 'image/jpeg'))).toContain('disguised_executable');
  });

  it('flags archives that list executables', () => {
    expect(types(withFile('docs.zip', zipListing('invoice.scr'), 'application/zip'))).toContain(
      'archive_with_executable',
    );
  });

  it('flags HTML attachments with a password form', () => {
    const page =
      '<html><form action="https://x.test"><input type="password" name="p"></form></html>';
    const a = analyzeAttachments(withFile('secure-message.html', page, 'text/html'), settings);
    expect(
      a.indicators?.some((i) => i.type === 'html_attachment' && i.value.includes('form')),
    ).toBe(true);
    expect(a.is_phishing).toBe(true);
  });

  it('flags SVG attachments with script', () => {
    const svg =
      '<svg xmlns="http://www.w3.org/2000/svg"><script>location.href="https://x.test"</script></svg>';
    expect(types(withFile('voice-message.svg', svg, 'image/svg+xml'))).toContain('html_attachment');
  });
});

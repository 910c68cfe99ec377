import { defineSymbols } from '../shared/symbols.ts';

/** The attachment analyzer's symbols with their declared scores (log-odds). */
export const ATTACHMENTS_SYMBOLS = defineSymbols({
  dangerous_extension: {
    score: 3.0,
    group: 'payload',
    reason: 'an attachment type that runs code when opened (.exe, .js, .lnk, .iso, …)',
  },
  double_extension: {
    score: 3.0,
    group: 'payload',
    reason: 'a name with two extensions, the last one executable (invoice.pdf.exe)',
  },
  macro_document: {
    score: 2.5,
    group: 'payload',
    reason: 'an office document with macros',
  },
  disguised_executable: {
    score: 4.0,
    group: 'payload',
    reason: 'an executable whose name or declared type says it is something else',
  },
  archive_with_executable: {
    score: 3.0,
    group: 'payload',
    reason: 'an archive holding an executable or script',
  },
  password_in_message: {
    score: 2.5,
    group: 'payload',
    reason:
      'an encrypted attachment whose password the message itself gives: the encryption hides the file from scanners, not from the reader',
  },
  encrypted_archive: {
    score: 1.5,
    group: 'payload',
    reason: 'an encrypted archive, which scanners cannot open',
  },
  html_attachment: {
    score: 1.2,
    group: 'payload',
    reason: 'an HTML attachment: a local phishing page that no link scanner sees',
  },
  html_with_form: {
    score: 3.0,
    group: 'payload',
    reason: 'an HTML attachment with a form',
  },
  html_with_script: {
    score: 1.5,
    group: 'payload',
    reason: 'an HTML attachment with script',
  },
  svg_with_script: {
    score: 3.0,
    group: 'payload',
    reason: 'an SVG image with script',
  },
  pdf_active: {
    score: 1.5,
    group: 'payload',
    reason: 'a PDF with JavaScript, launch actions or embedded files',
  },
});

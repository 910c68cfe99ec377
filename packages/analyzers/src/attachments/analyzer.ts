import { createHash } from 'node:crypto';
import type { AnalyzerAnswerInput, DocumentLink, Email } from '@trawl/contracts';
import { documentUrls } from '@trawl/mail';
import { answerFrom, type Finding } from '../shared/score.ts';
import { type AttachmentView, viewOf } from '../shared/view.ts';
import { type AttachmentsSettings, DOCUMENT_EXTENSIONS } from './settings.ts';
import { ATTACHMENTS_SYMBOLS } from './symbols.ts';

const EXECUTABLE_KINDS = new Set(['executable', 'script', 'shortcut', 'disk_image']);

function lastExt(name: string): string {
  const m = /\.([a-z0-9-]{1,16})$/i.exec(name.trim());
  return m?.[1]?.toLowerCase() ?? '';
}

/** Findings for one attachment. */
/**
 * Names under which script content is what it says (source files that a double-click opens in an
 * editor, not a disguise): a `.py` holding Python is not a disguised executable.
 */
const SCRIPT_SOURCE = new Set([
  'py',
  'pl',
  'pm',
  'sh',
  'bash',
  'zsh',
  'ksh',
  'csh',
  'rb',
  'php',
  'tcl',
  'lua',
  'r',
  'awk',
  'sed',
  'txt',
  'patch',
  'diff',
  'c',
  'h',
  'cc',
  'cpp',
  'hpp',
  'go',
  'rs',
  'java',
  'ts',
  'm',
  'ipynb',
  'conf',
  'cfg',
  'ini',
  'mk',
  'cmake',
  'in',
]);

function attachmentFindings(a: AttachmentView, s: AttachmentsSettings): Finding[] {
  const w = s.weights;
  const out: Finding[] = [];
  const name = a.filename.slice(0, 200);
  const [ext = '', prev = ''] = a.extensions;
  const dangerous = new Set(s.dangerous_extensions);
  if (dangerous.has(ext)) {
    out.push({
      type: 'dangerous_attachment',
      value: `${name}: .${ext} file`,
      symbol: 'dangerous_extension',
      weight: w.dangerous_extension,
    });
    if (prev && DOCUMENT_EXTENSIONS.includes(prev)) {
      out.push({
        type: 'double_extension',
        value: `${name}: .${prev} name hiding a .${ext}`,
        symbol: 'double_extension',
        weight: w.double_extension,
      });
    }
  } else if (
    /\.(pdf|docx?|xlsx?|jpe?g|png|txt)\s{3,}\S/i.test(name) ||
    /[\u202e\u202d]/.test(name)
  ) {
    out.push({
      type: 'double_extension',
      value: `${name}: padded or right-to-left name`,
      symbol: 'double_extension',
      weight: w.double_extension,
    });
  }
  if (s.macro_extensions.includes(ext) || a.has_macros) {
    out.push({
      type: 'macro_document',
      value: `${name}: document with macros`,
      symbol: 'macro_document',
      weight: w.macro_document,
    });
  }
  if (
    EXECUTABLE_KINDS.has(a.kind) &&
    !dangerous.has(ext) &&
    !(a.kind === 'script' && SCRIPT_SOURCE.has(ext))
  ) {
    out.push({
      type: 'disguised_executable',
      value: `${name}: ${a.kind} content behind a .${ext || '(none)'} name`,
      symbol: 'disguised_executable',
      weight: w.disguised_executable,
    });
  }
  const archive = a.kind === 'archive' || s.archive_extensions.includes(ext);
  if (archive) {
    const bad = a.archive_entries.find((e) => {
      const x = lastExt(e);
      return dangerous.has(x) || s.macro_extensions.includes(x);
    });
    if (bad) {
      out.push({
        type: 'archive_with_executable',
        value: `${name} contains ${bad.slice(0, 120)}`,
        symbol: 'archive_with_executable',
        weight: w.archive_with_executable,
      });
    }
    if (a.encrypted) {
      out.push({
        type: 'archive_with_executable',
        value: `${name}: password-protected archive (contents hidden from scanning)`,
        symbol: 'encrypted_archive',
        weight: w.encrypted_archive,
      });
    }
  }
  const isHtml =
    a.kind === 'html' || ['htm', 'html', 'shtml', 'xhtml', 'mht', 'mhtml'].includes(ext);
  const isSvg = a.kind === 'svg' || ext === 'svg';
  if (isHtml || isSvg) {
    const textual = a.bytes ? a.bytes.subarray(0, 2_000_000).toString('latin1').toLowerCase() : '';
    const forms = a.html_forms || /<form\b/.test(textual);
    const password = a.html_password_inputs || /type\s*=\s*["']?password/.test(textual);
    const scripts =
      a.html_scripts ||
      /<script\b|\bon(load|error|click)\s*=|javascript:|<foreignobject\b/.test(textual);
    const refresh =
      /http-equiv\s*=\s*["']?refresh|window\.location|location\.(href|replace)|atob\(/.test(
        textual,
      );
    if (isSvg && (scripts || forms)) {
      out.push({
        type: 'html_attachment',
        value: `${name}: SVG with script or form`,
        symbol: 'svg_with_script',
        weight: w.svg_with_script,
      });
    } else if (forms || password) {
      out.push({
        type: 'html_attachment',
        value: `${name}: HTML attachment with a ${password ? 'password ' : ''}form`,
        symbol: 'html_with_form',
        weight: w.html_with_form,
      });
    } else if (scripts || refresh) {
      out.push({
        type: 'html_attachment',
        value: `${name}: HTML attachment that runs script or redirects`,
        symbol: 'html_with_script',
        weight: w.html_with_script,
      });
    } else if (isHtml) {
      out.push({
        type: 'html_attachment',
        value: `${name}: HTML attachment`,
        symbol: 'html_attachment',
        weight: w.html_attachment,
      });
    }
  }
  if (a.pdf_flags.some((f) => /javascript|openaction|launch|embedded/i.test(f))) {
    out.push({
      type: 'dangerous_attachment',
      value: `${name}: PDF with active content (${a.pdf_flags.join(', ')})`,
      symbol: 'pdf_active',
      weight: w.pdf_active,
    });
  }
  return out;
}

/** Words for a password, in the languages of the lexicons (lower-case, accents as written). */
const PASSWORD_WORDS = [
  'password',
  'passcode',
  'passwort',
  'kennwort',
  'mot de passe',
  'senha',
  'contraseña',
  'contrasena',
  'clave',
  'wachtwoord',
];

/**
 * After a password word: a few words on one line ("PDF", "de acesso ao PDF", "for the zip"), then
 * `:` or `=` and the token; or "is" and the token. Anchored, and linear: the first part stops at the
 * first `:`, `=` or line end.
 */
const GIVEN_AFTER =
  /^(?:[^:=\n]{0,40}[:=]|[^\S\n]{1,3}(?:is|é|ist|est|es)[^\S\n])[^\S\n]{0,3}["'“«]?([^\s"'”»]{2,32})/;

/**
 * The password a message's text gives, if any: a password word followed, within a few words, by
 * `:` or "is" and a token ("Senha PDF: 123", "the password is Inv2024"). A bounded scan: each
 * occurrence of a word looks at the 80 characters after it with an anchored pattern.
 */
function passwordGiven(text: string): string | undefined {
  const lower = text.slice(0, 20_000).toLowerCase();
  for (const word of PASSWORD_WORDS) {
    let seen = 0;
    for (let at = lower.indexOf(word); at !== -1 && seen < 20; at = lower.indexOf(word, at + 1)) {
      seen++;
      const m = GIVEN_AFTER.exec(lower.slice(at + word.length, at + word.length + 80));
      if (m?.[1]) return m[1];
    }
  }
  return undefined;
}

/**
 * An encrypted attachment whose password the message itself gives: the encryption keeps the file
 * from the scanners, not from anyone who reads the message, which is the only reason to send it so.
 */
function passwordInMessageFindings(
  v: ReturnType<typeof viewOf>,
  s: AttachmentsSettings,
): Finding[] {
  const locked = v.attachments.find((a) => a.encrypted);
  if (!locked) return [];
  const given = passwordGiven(v.text);
  if (!given) return [];
  return [
    {
      type: 'dangerous_attachment',
      value: `${locked.filename.slice(0, 120) || 'an attachment'} is encrypted and the message gives its password`,
      symbol: 'password_in_message',
      weight: s.weights.password_in_message,
    },
  ];
}

export function analyzeAttachments(
  email: Email,
  settings: AttachmentsSettings,
): AnalyzerAnswerInput {
  const v = viewOf(email);
  const findings: Finding[] = [];
  const files: {
    filename: string;
    content_type: string;
    size: number;
    kind: string;
    sha256?: string;
  }[] = [];
  findings.push(...passwordInMessageFindings(v, settings));
  for (const a of v.attachments) {
    findings.push(...attachmentFindings(a, settings));
    const given = (email.attachments ?? []).find((x) => x.filename === a.filename)?.sha256;
    const sha256 =
      given ?? (a.bytes ? createHash('sha256').update(a.bytes).digest('hex') : undefined);
    files.push({
      filename: a.filename,
      content_type: a.content_type,
      size: a.size,
      kind: a.kind,
      ...(sha256 ? { sha256 } : {}),
    });
  }
  // The links inside the attachments (PDF, Office, calendar, QR codes), found here, in the analysis
  // pool's thread: the job's evidence and the threat-intel lookups read this list (documentLinksIn).
  const links: DocumentLink[] = documentUrls(email).map((u) => ({
    url: u.url.slice(0, 2048),
    source: u.source as DocumentLink['source'],
    attachment: u.attachment ?? 0,
    attachment_name: (u.attachmentName ?? '').slice(0, 512),
  }));
  return answerFrom(findings, {
    base: settings.base_probability,
    threshold: settings.phishing_score_threshold,
    name: 'attachments',
    details: { attachments: files, document_urls: links },
    maxLogOdds: 8,
    groups: ATTACHMENTS_SYMBOLS,
  });
}

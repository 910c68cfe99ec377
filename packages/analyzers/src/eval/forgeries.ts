/**
 * What an attacker can add to a phishing message to talk its score down: headers anyone can write,
 * an ARC set sealed by his own relay, a report structure. `pnpm eval --forged` runs each phishing
 * message of the corpora once as it is and once per forgery, and reports what every forgery did to
 * the recall (issue 27: a header the sender controls explains away only what it accounts for). The
 * forged-headers test holds that no forgery lowers the score of any message.
 *
 * Each forgery works on the raw bytes and only adds or rewrites headers (for `report` it wraps the
 * body, for `own_link` it adds a link to the From domain's own site to the body's text parts), as a
 * sender would before sending; nothing a receiving hop writes is touched, except
 * `arc`, where the receiving hop's own Authentication-Results says `arc=pass` because the
 * attacker's seal verifies.
 */

export const FORGERIES = [
  'list',
  'list_own',
  'thread',
  'mailer',
  'auth_below',
  'arc',
  'null_sender',
  'report',
  'sender',
  'on_behalf',
  'own_link',
] as const;
export type Forgery = (typeof FORGERIES)[number];

interface Split {
  /** Header lines as written, folded continuation lines joined to their header (with CRLF). */
  headers: string[];
  eol: string;
  body: string;
}

function split(raw: string): Split {
  const crlf = raw.indexOf('\r\n\r\n');
  const lf = raw.indexOf('\n\n');
  const useCrlf = crlf !== -1 && (lf === -1 || crlf <= lf + 1);
  const eol = useCrlf ? '\r\n' : '\n';
  const end = useCrlf ? crlf : lf;
  const head = end === -1 ? raw : raw.slice(0, end);
  const body = end === -1 ? '' : raw.slice(end + eol.length * 2);
  const headers: string[] = [];
  for (const line of head.split(eol)) {
    if ((line.startsWith(' ') || line.startsWith('\t')) && headers.length > 0)
      headers[headers.length - 1] += eol + line;
    else headers.push(line);
  }
  return { headers, eol, body };
}

function join(s: Split): string {
  return `${s.headers.join(s.eol)}${s.eol}${s.eol}${s.body}`;
}

const nameOf = (h: string) =>
  h
    .slice(0, Math.max(0, h.indexOf(':')))
    .trim()
    .toLowerCase();
const headerValue = (h: string) => h.slice(h.indexOf(':') + 1).trim();

function find(s: Split, name: string): number {
  return s.headers.findIndex((h) => nameOf(h) === name);
}

const NO_ADDRESS = 'someone@sender.example';

/** The From address (lower-case) and its domain, as far as a simple reading gets them. */
function fromOf(s: Split): { address: string; domain: string; display: string } {
  const i = find(s, 'from');
  const v = i === -1 ? '' : headerValue(s.headers[i]!).replace(/\r?\n[ \t]+/g, ' ');
  const angle = /<([^<>@\s]+@[^<>@\s]+)>/.exec(v)?.[1];
  const bare = /([A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,})/.exec(v)?.[1];
  const address = (angle ?? bare ?? NO_ADDRESS).toLowerCase();
  const display = angle ? v.slice(0, v.indexOf('<')).replace(/"/g, '').trim() : '';
  return { address, domain: address.split('@')[1] ?? 'sender.example', display };
}

/**
 * Puts `lines` where a sender's own headers are: below every header a hop on the way wrote (each
 * hop prepends its own), which the end of the header block always is.
 */
function belowTrace(s: Split, lines: string[]): void {
  s.headers.push(...lines);
}

const REPLY = /^\s*(?:re|fwd?|aw|wg|tr|rv|sv|antw)\s*:/i;

/** The message with one forgery applied; bytes are read and written as latin1 (byte-preserving). */
export function forge(kind: Forgery, raw: Buffer): Buffer {
  const s = split(raw.toString('latin1'));
  const from = fromOf(s);
  switch (kind) {
    case 'list':
      s.headers.push(
        'List-Id: Announcements <announce.lists.example.net>',
        'List-Unsubscribe: <mailto:leave@lists.example.net>, <https://lists.example.net/u>',
        'Precedence: list',
      );
      break;
    case 'list_own':
      s.headers.push(
        `List-Id: News <news.${from.domain}>`,
        `List-Post: <mailto:${from.address}>`,
        `List-Unsubscribe: <mailto:unsubscribe@${from.domain}>, <https://${from.domain}/unsubscribe>`,
        'Precedence: bulk',
      );
      break;
    case 'thread': {
      // a message that is no reply, made one: "Re:" and the headers of a thread it never was in
      const i = find(s, 'subject');
      if (i === -1 || REPLY.test(headerValue(s.headers[i]!)) || find(s, 'in-reply-to') !== -1)
        break;
      s.headers[i] = `Subject: Re: ${headerValue(s.headers[i]!)}`;
      s.headers.push(
        'In-Reply-To: <a1b2c3.forged@mail.example.net>',
        'References: <a1b2c3.forged@mail.example.net>',
      );
      break;
    }
    case 'mailer':
      s.headers.push('X-Mailer: Microsoft Outlook 16.0');
      break;
    case 'auth_below':
      belowTrace(s, [
        `Authentication-Results: mail.relay.example.net; spf=pass smtp.mailfrom=${from.domain}; dkim=pass header.d=${from.domain}; dmarc=pass header.from=${from.domain}`,
      ]);
      break;
    case 'arc': {
      const seal = [
        `ARC-Seal: i=1; a=rsa-sha256; t=1700000000; cv=none; d=relay.example.net; s=arc; b=Zm9yZ2Vk`,
        `ARC-Message-Signature: i=1; a=rsa-sha256; c=relaxed/relaxed; d=relay.example.net; s=arc; h=from:to:subject; bh=Zm9yZ2Vk; b=Zm9yZ2Vk`,
        `ARC-Authentication-Results: i=1; relay.example.net; spf=pass smtp.mailfrom=${from.domain}; dkim=pass header.d=${from.domain}; dmarc=pass header.from=${from.domain}`,
      ];
      belowTrace(s, seal);
      // the receiving hop verified the seal (it is a valid seal, of the attacker's own relay)
      const ar = find(s, 'authentication-results');
      if (ar !== -1) s.headers[ar] = `${s.headers[ar]!.replace(/;?\s*$/, '')}; arc=pass`;
      break;
    }
    case 'report': {
      const boundary = 'forged-report-0a1b2c';
      const keep = (n: string) => n === 'content-type' || n === 'content-transfer-encoding';
      const inner = s.headers.filter((h) => keep(nameOf(h)));
      const outer = s.headers.filter((h) => !keep(nameOf(h)) && nameOf(h) !== 'return-path');
      outer.unshift('Return-Path: <>');
      outer.push(
        `Content-Type: multipart/report; report-type=delivery-status; boundary="${boundary}"`,
      );
      const e = s.eol;
      s.headers = outer;
      s.body = [
        `--${boundary}`,
        ...(inner.length ? inner : ['Content-Type: text/plain']),
        '',
        s.body,
        `--${boundary}`,
        'Content-Type: message/delivery-status',
        '',
        'Reporting-MTA: dns; mx.example.net',
        '',
        'Final-Recipient: rfc822; user@example.net',
        'Action: failed',
        'Status: 5.1.1',
        '',
        `--${boundary}--`,
        '',
      ].join(e);
      break;
    }
    case 'null_sender':
      s.headers = s.headers.filter((h) => nameOf(h) !== 'return-path');
      s.headers.unshift('Return-Path: <>');
      break;
    case 'sender':
      s.headers.push('Sender: notifications@relay.example.net');
      break;
    case 'on_behalf': {
      // replies to the address the display name shows (when it shows one)
      const shown = /([A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,})/.exec(from.display)?.[1];
      if (shown && find(s, 'reply-to') === -1) s.headers.push(`Reply-To: ${shown}`);
      break;
    }
    case 'own_link':
      // a link to the site of the domain the message claims to come from: anyone can write it
      if (find(s, 'from') !== -1 && from.address !== NO_ADDRESS)
        s.body = withOwnLink(s.headers, s.body, from.domain, 0);
      break;
  }
  return Buffer.from(join(s), 'latin1');
}

/** The unfolded value of the first header `name` of a header block ('' when absent). */
function headerIn(headers: readonly string[], name: string): string {
  const h = headers.find((x) => nameOf(x) === name);
  return h === undefined ? '' : headerValue(h).replace(/\r?\n[ \t]+/g, ' ');
}

/**
 * A part's header lines and body. Lines are split at `\n` with their `\r` kept, and `sep` is the
 * blank line between them as written, so `headers.join('\n') + sep + body` is the part again.
 */
function splitPart(text: string): { headers: string[]; body: string; sep: string } {
  const m = /^\r?\n|\r?\n\r?\n/.exec(text);
  if (!m) return { headers: text.split('\n'), body: '', sep: '' };
  const headers: string[] = [];
  if (m.index > 0)
    for (const line of text.slice(0, m.index).split('\n')) {
      if ((line.startsWith(' ') || line.startsWith('\t')) && headers.length > 0)
        headers[headers.length - 1] += `\n${line}`;
      else headers.push(line);
    }
  return { headers, body: text.slice(m.index + m[0].length), sep: m[0] };
}

/** Whether `line` is a delimiter line of `boundary` (RFC 2046: `--boundary`, maybe `--` after). */
function isDelimiter(line: string, boundary: string): boolean {
  if (!line.startsWith(`--${boundary}`)) return false;
  const rest = line.slice(boundary.length + 2);
  return /^(?:--)?[ \t\r]*$/.test(rest);
}

/** `body` with `add` put before `</body>` (or `</html>`), else before its trailing blank space. */
function insertLink(body: string, add: string, html: boolean): string {
  const lower = html ? body.toLowerCase() : '';
  let at = html ? lower.lastIndexOf('</body') : -1;
  if (at === -1 && html) at = lower.lastIndexOf('</html');
  if (at === -1) at = body.trimEnd().length;
  return body.slice(0, at) + add + body.slice(at);
}

/**
 * The body of one MIME entity with a link to `https://<domain>/` added to its text: to each
 * inline `text/html` part as an anchor, to each inline `text/plain` part as a written URL (a
 * multipart walked part by part; base64 and quoted-printable written back as they were).
 */
function withOwnLink(
  headers: readonly string[],
  body: string,
  domain: string,
  depth: number,
): string {
  const ct = headerIn(headers, 'content-type');
  const type = /^\s*([^\s;/]+\/[^\s;]+)/.exec(ct)?.[1]?.toLowerCase() ?? 'text/plain';
  if (/^\s*attachment/i.test(headerIn(headers, 'content-disposition'))) return body;
  if (type.startsWith('multipart/')) {
    const boundary = /boundary\s*=\s*(?:"([^"]+)"|([^\s;]+))/i.exec(ct);
    const b = boundary?.[1] ?? boundary?.[2];
    if (!b || depth > 8) return body;
    const lines = body.split('\n');
    const delims: number[] = [];
    for (let i = 0; i < lines.length; i++)
      if (isDelimiter(lines[i]!, b)) {
        delims.push(i);
        if (lines[i]!.startsWith(`--${b}--`)) break;
      }
    for (let k = delims.length - 2; k >= 0; k--) {
      const from = delims[k]! + 1;
      const to = delims[k + 1]!;
      const part = splitPart(lines.slice(from, to).join('\n'));
      const inner = withOwnLink(part.headers, part.body, domain, depth + 1);
      const text = `${part.headers.join('\n')}${part.sep}${inner}`;
      lines.splice(from, to - from, ...text.split('\n'));
    }
    return lines.join('\n');
  }
  const html = type === 'text/html';
  if (!html && type !== 'text/plain') return body;
  const cte = headerIn(headers, 'content-transfer-encoding').trim().toLowerCase();
  const url = `https://${domain}/`;
  const eol = body.includes('\r\n') ? '\r\n' : '\n';
  if (cte === 'base64') {
    const text = Buffer.from(body.replace(/[^A-Za-z0-9+/]/g, ''), 'base64').toString('latin1');
    const out = insertLink(
      text,
      html ? `<p><a href="${url}">${domain}</a></p>` : `${eol}${eol}${url}${eol}`,
      html,
    );
    const lines =
      Buffer.from(out, 'latin1')
        .toString('base64')
        .match(/.{1,76}/g) ?? [];
    return lines.join(eol) + body.slice(body.trimEnd().length);
  }
  const q = cte === 'quoted-printable' ? '=3D' : '=';
  const add = html ? `<p><a href${q}"${url}">${domain}</a></p>` : `${eol}${eol}${url}${eol}`;
  return insertLink(body, add, html);
}

/** What one message's run needs for the comparison. */
interface Run {
  source: string;
  file: string;
  label: string;
  predicted: boolean;
  probability: number;
  forgery?: string;
}

export interface ForgeryStats {
  forgery: Forgery;
  messages: number;
  /** Recall with the forgery, and of the same messages as they were judged against. */
  recall: number;
  baseRecall: number;
  /** Messages whose probability fell against their baseline (source/file). */
  fell: string[];
}

/**
 * Each forgery against its baseline: the message as sent; for `report`, the message sent from the
 * null sender (a report comes from there, and a sender may always give no return path, report or
 * not), so that what is measured is what the report's recognition did.
 */
export function compareForged(outs: readonly Run[]): ForgeryStats[] {
  const asSent = new Map<string, Run>();
  const fromNull = new Map<string, Run>();
  const key = (o: Run) =>
    `${o.forgery ? o.source.slice(0, o.source.lastIndexOf('+')) : o.source}/${o.file}`;
  for (const o of outs) {
    if (o.label !== 'phishing') continue;
    if (!o.forgery) asSent.set(key(o), o);
    else if (o.forgery === 'null_sender') fromNull.set(key(o), o);
  }
  const out: ForgeryStats[] = [];
  for (const f of FORGERIES) {
    const st: ForgeryStats = { forgery: f, messages: 0, recall: 0, baseRecall: 0, fell: [] };
    let tp = 0;
    let tp0 = 0;
    for (const o of outs) {
      if (o.forgery !== f) continue;
      const base = (f === 'report' ? fromNull : asSent).get(key(o));
      if (!base) continue;
      st.messages++;
      if (o.predicted) tp++;
      if (base.predicted) tp0++;
      if (o.probability < base.probability - 1e-9) st.fell.push(key(o));
    }
    if (st.messages === 0) continue;
    st.recall = tp / st.messages;
    st.baseRecall = tp0 / st.messages;
    out.push(st);
  }
  return out;
}

/** One line per forgery: recall with it, recall of its baseline, how many messages' scores fell. */
export function formatForged(outs: readonly Run[]): string[] {
  const lines = [
    'forged headers (each phishing message as sent, then with what an attacker can add):',
    `  ${'forgery'.padEnd(12)} ${'messages'.padStart(8)} ${'recall'.padStart(7)} ${'before'.padStart(7)} ${'fell'.padStart(5)}  (before: as sent; for report, sent from the null sender)`,
  ];
  for (const st of compareForged(outs))
    lines.push(
      `  ${st.forgery.padEnd(12)} ${String(st.messages).padStart(8)} ${st.recall.toFixed(3).padStart(7)} ${st.baseRecall.toFixed(3).padStart(7)} ${String(st.fell.length).padStart(5)}`,
    );
  return lines;
}

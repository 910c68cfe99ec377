/**
 * A synchronous port of what mailparser 3.9's MailParser does with the splitter's output, for the
 * options parseRawEmail used (skipHtmlToText, skipTextToHtml, skipTextLinks, skipImageLinks,
 * checksumAlgo sha256): the node tree, inline vs attachment decisions, the part decoders, format=flowed,
 * charset decoding, the text / html assembly (getTextContent, with the summary of an attached
 * message/rfc822) and the attachments in the order mailparser emits them. Header fields are decoded
 * only where something reads them (see DECODED_HEADER_KEYS).
 */
import { createHash } from 'node:crypto';
import { PartDecoder, type PartEncoding } from './decoders.ts';
import {
  addressparser,
  encodingJapanese,
  he,
  iconv,
  libmime,
  type ParsedAddress,
  punycode,
} from './libs.ts';
import {
  type HeaderLine,
  type MimeNode,
  type Slice,
  type SplitSink,
  Splitter,
} from './splitter.ts';

/** One attachment as mailparser reports it, with its decoded content. */
interface MimeAttachment {
  filename: string | undefined;
  contentType: string | false;
  contentId: string | undefined;
  content: Buffer;
}

export interface MimeParse {
  /** The top-level header lines (mailsplit's `{ key, line }`, binary strings). */
  headerLines: HeaderLine[];
  /** The top-level header fields mailparser decodes (From, Sender, To, Cc, Bcc, ...). */
  headers: Map<string, unknown>;
  text: string | undefined;
  html: string | undefined;
  attachments: MimeAttachment[];
}

export interface ParseMimeOptions {
  /** mailsplit's maxHeadSize. */
  maxHeadSize: number;
  /** mailsplit's maxChildNodes. */
  maxChildNodes: number;
  /** Called between input chunks and parts; may throw to give up. */
  checkpoint: () => void;
}

/** Header fields whose decoded value anything reads (mailparser decodes them all). */
const DECODED_HEADER_KEYS = new Set([
  'from',
  'sender',
  'to',
  'cc',
  'bcc',
  'subject',
  'date',
  'content-id',
]);
const ADDRESS_KEYS = new Set(['from', 'sender', 'to', 'cc', 'bcc']);
const SINGLE_KEYS = new Set(['content-id', 'from', 'sender', 'subject', 'date']);
const TEXT_TYPES = ['text/plain', 'text/html', 'message/delivery-status'];

interface AddressValue {
  value: ParsedAddress[];
}

/** mailparser's linear check for `<...@...>` in a decoded encoded-word. */
function hasBracketedAddress(str: string): boolean {
  let start = -1;
  let at = -1;
  for (let i = 0, len = str.length; i < len; i++) {
    const chr = str.charAt(i);
    if (chr === '<') {
      start = i;
      at = -1;
    } else if (chr === '>') {
      if (start >= 0 && at >= 0 && at < i - 1) return true;
      start = -1;
      at = -1;
    } else if (chr === '@' && start >= 0 && at < 0 && i > start + 1) {
      at = i;
    }
  }
  return false;
}

const B_WORDS_ONLY = /^(=\?([^?]+)\?[Bb]\?[^?]*\?=)(\s*=\?([^?]+)\?[Bb]\?[^?]*\?=)*$/;
const ENCODED_WORD = /[=]\?[^?]+\?[BbQq]\?[^?]*\?[=]/;

/** mailparser's decodeAddresses (in place). */
function decodeAddresses(addresses: ParsedAddress[]): void {
  const processed = new WeakSet<ParsedAddress>();
  for (let i = 0; i < addresses.length; i++) {
    const address = addresses[i] as ParsedAddress;
    address.name = (address.name || '').toString().trim();
    if (!address.address && B_WORDS_ONLY.test(address.name) && !processed.has(address)) {
      const decoded = libmime.decodeWords(address.name);
      if (hasBracketedAddress(decoded)) {
        const parsed = addressparser(decoded);
        for (const entry of parsed) {
          processed.add(entry);
          addresses.push(entry);
        }
        addresses.splice(i, 1);
        i--;
        continue;
      }
      address.name = decoded;
      continue;
    }
    if (address.name) {
      try {
        address.name = libmime.decodeWords(address.name);
      } catch {
        // kept as is
      }
    }
    if (address.address && ENCODED_WORD.test(address.address)) {
      try {
        const decodedAddr = libmime.decodeWords(address.address);
        address.address =
          /^[^\s@]+@[^\s@]+$/.test(decodedAddr) && !/[=]\?/.test(decodedAddr) ? decodedAddr : '';
      } catch {
        address.address = '';
      }
    }
    if (/@xn--/.test(String(address.address))) {
      const a = address.address as string;
      try {
        address.address =
          a.substr(0, a.lastIndexOf('@') + 1) +
          punycode.toUnicode(a.substr(a.lastIndexOf('@') + 1));
      } catch {
        // not valid punycode: kept as is
      }
    }
    if (address.group) decodeAddresses(address.group);
  }
}

/** mailparser's processHeaders for the fields of DECODED_HEADER_KEYS. */
function processHeaders(lines: readonly HeaderLine[]): Map<string, unknown> {
  const collected = new Map<string, unknown[]>();
  for (const line of lines) {
    const key = line.key;
    if (!DECODED_HEADER_KEYS.has(key)) continue;
    const decoded = (libmime.decodeHeader(line.line).value || '').toString().trim();
    let value: unknown = Buffer.from(decoded, 'binary').toString();
    if (key === 'date') {
      let date = new Date(value as string);
      if (Number.isNaN(date.getTime())) date = new Date();
      value = date;
    } else if (key === 'subject') {
      try {
        value = libmime.decodeWords(value as string);
      } catch {
        // kept as is
      }
    } else if (ADDRESS_KEYS.has(key)) {
      const list = addressparser(value as string);
      decodeAddresses(list);
      value = { value: list } satisfies AddressValue;
    }
    if (value) {
      const values = collected.get(key);
      if (values === undefined) collected.set(key, [value]);
      else values.push(value);
    }
  }
  const headers = new Map<string, unknown>();
  for (const [key, values] of collected) {
    if (SINGLE_KEYS.has(key)) headers.set(key, values[values.length - 1]);
    else headers.set(key, values.length === 1 ? values[0] : values);
  }
  return headers;
}

function addressesHtml(addresses: readonly ParsedAddress[]): string {
  return addresses
    .map((address) => {
      let str = '<span class="mp_address_group">';
      if (address.name) {
        str += `<span class="mp_address_name">${he.encode(address.name)}${address.group ? ': ' : ''}</span>`;
      }
      if (address.address) {
        const link = `<a href="mailto:${he.encode(address.address)}" class="mp_address_email">${he.encode(address.address)}</a>`;
        str += address.name ? ` &lt;${link}&gt;` : link;
      }
      if (address.group) str += `${addressesHtml(address.group)};`;
      return `${str}</span>`;
    })
    .join(', ');
}

function addressesText(addresses: readonly ParsedAddress[]): string {
  return addresses
    .map((address) => {
      let str = '';
      if (address.name) str += `"${address.name}"${address.group ? ': ' : ''}`;
      if (address.address) str += address.name ? ` <${address.address}>` : address.address;
      if (address.group) str += `${addressesText(address.group)};`;
      return str;
    })
    .join(', ');
}

/** A node of mailparser's tree. */
interface TreeNode {
  node: MimeNode;
  contentType: string | false;
  children: TreeNode[];
  parent?: TreeNode;
  root?: boolean;
  headers?: Map<string, unknown>;
  disposition?: string;
  isAttachment?: boolean;
  decoder?: PartDecoder;
  showMeta?: boolean;
  /** An inline text part: its text once its decoder has ended. */
  text?: boolean;
  textContent?: string;
}

/** The decoded text of an inline text part (flowed, charset), as mailparser assembles it. */
function textOf(tree: TreeNode): string {
  const decoder = tree.decoder as PartDecoder;
  let chunks = decoder.output;
  if (tree.node.flowed) {
    const all = Buffer.concat(chunks);
    chunks =
      all.length > 0
        ? [Buffer.from(libmime.decodeFlowed(all.toString('binary'), tree.node.delSp), 'binary')]
        : [];
  }
  const charset = tree.node.charset || 'utf-8';
  if (!['ascii', 'usascii', 'utf8'].includes(charset.toLowerCase().replace(/[^a-z0-9]+/g, ''))) {
    const decoded = decodeCharset(chunks, charset);
    if (decoded !== undefined) chunks = decoded;
  }
  const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
  const text = bytes.toString();
  // what `replace(/\r?\n/g, '\n')` answers: only CRLF changes
  return text.includes('\r') ? text.replaceAll('\r\n', '\n') : text;
}

/** mailparser's decodeStream(charset) applied to `chunks`; undefined when it cannot decode. */
function decodeCharset(chunks: Buffer[], charset: string): Buffer[] | undefined {
  let normalized: string;
  try {
    normalized = libmime.normalizeCharset((charset || 'ascii').toString());
  } catch {
    return undefined;
  }
  if (/^jis|^iso-?2022-?jp/i.test(normalized)) {
    const input = Buffer.concat(chunks);
    try {
      const output = encodingJapanese.convert(input, {
        to: 'UNICODE',
        from: normalized,
        type: 'string',
      });
      return [typeof output === 'string' ? Buffer.from(output) : (output as Buffer)];
    } catch {
      return [input];
    }
  }
  let decoder: ReturnType<typeof iconv.getDecoder>;
  try {
    decoder = iconv.getDecoder(normalized);
  } catch {
    return undefined;
  }
  let out = '';
  for (const chunk of chunks) {
    const s = decoder.write(chunk);
    if (s?.length) out += s;
  }
  const last = decoder.end();
  if (last?.length) out += last;
  return [Buffer.from(out)];
}

function metaValue(key: string, value: unknown, html: boolean): string {
  switch (key) {
    case 'From':
    case 'To':
    case 'Cc':
    case 'Bcc': {
      const list = (value as AddressValue).value;
      return html ? addressesHtml(list) : addressesText(list);
    }
    case 'Date':
      return (value as Date).toUTCString();
    case 'Subject':
      return html ? `<strong>${he.encode(value as string)}</strong>` : (value as string);
    default:
      return html ? he.encode(String(value)) : String(value);
  }
}

const META_KEYS = ['From', 'Subject', 'Date', 'To', 'Cc', 'Bcc'];

class MailTree implements SplitSink {
  tree: TreeNode | undefined;
  curnode: TreeNode | undefined;
  headerLines: HeaderLine[] = [];
  headers = new Map<string, unknown>();
  hasHtml = false;
  hasText = false;
  readonly attachments: { tree: TreeNode; contentType: string | false }[] = [];
  readonly texts: TreeNode[] = [];

  constructor(readonly checkpoint: () => void) {}

  node(node: MimeNode): void {
    const tree = this.createNode(node);
    if (tree === this.tree) this.headers = tree.headers ?? new Map();
    if (node.contentType === 'message/rfc822' && node.messageNode) return;
    if (node.parentNode && node.parentNode.contentType === 'message/rfc822') {
      tree.showMeta = true;
      tree.headers ??= processHeaders(node.headers || []);
    }
    if (tree.isAttachment) {
      let contentType = tree.contentType;
      if (contentType === 'application/octet-stream' && node.filename) {
        contentType = libmime.detectMimeType(node.filename) || 'application/octet-stream';
      }
      tree.headers ??= processHeaders(node.headers || []);
      this.attachments.push({ tree, contentType });
    } else if (tree.disposition === 'inline') {
      if (tree.contentType === 'text/plain') this.hasText = true;
      else if (tree.contentType === 'text/html') this.hasHtml = true;
      else if (tree.contentType === 'message/delivery-status') this.hasText = true;
      tree.text = true;
      this.texts.push(tree);
    }
    this.checkpoint();
  }

  slice(slice: Slice): void {
    const decoder = this.curnode?.decoder;
    if (decoder === undefined) return;
    if (slice.type === 'data') decoder.end();
    else decoder.write(slice.value);
  }

  end(): void {
    this.curnode?.decoder?.end();
  }

  private createNode(node: MimeNode): TreeNode {
    let contentType = node.contentType;
    if (!contentType && node.root) contentType = 'text/plain';
    const tree: TreeNode = { node, contentType, children: [] };
    if (node.root) {
      tree.headers = processHeaders(node.headers || []);
      if (this.tree === undefined) this.headerLines = node.headers || [];
    }
    if (!/^multipart\//i.test(String(contentType))) {
      let disposition = node.disposition;
      if (disposition && !['attachment', 'inline'].includes(disposition))
        disposition = 'attachment';
      const textType = TEXT_TYPES.includes(contentType as string);
      tree.disposition = !disposition && !textType ? 'attachment' : disposition || 'inline';
      tree.isAttachment = !textType || tree.disposition !== 'inline';
      const encoding = node.encoding;
      tree.decoder = new PartDecoder(
        (encoding === 'base64' || encoding === 'quoted-printable'
          ? encoding
          : 'binary') as PartEncoding,
      );
    }
    if (this.tree === undefined) {
      tree.root = true;
      this.curnode = this.tree = tree;
      return tree;
    }
    const cur = this.curnode as TreeNode;
    if (!cur.parent) {
      tree.parent = cur;
      cur.children.push(tree);
    } else if (cur.parent.node === node.parentNode) {
      tree.parent = cur.parent;
      cur.parent.children.push(tree);
    } else if (cur.node === node.parentNode) {
      tree.parent = cur;
      cur.children.push(tree);
    } else {
      for (let p: TreeNode | undefined = cur.parent; p !== undefined; p = p.parent) {
        if (p.node === node.parentNode) {
          tree.parent = p;
          p.children.push(tree);
          break;
        }
      }
    }
    this.curnode = tree;
    return tree;
  }

  /** mailparser's getTextContent. */
  textContent(): { text: string | undefined; html: string | undefined } {
    for (const t of this.texts) {
      if (t.decoder?.ended) {
        t.textContent = textOf(t);
        this.checkpoint();
      }
    }
    const text: string[] = [];
    const html: string[] = [];
    const processNode = (alternative: boolean, node: TreeNode): void => {
      if (node.showMeta) {
        const headers = node.headers ?? new Map<string, unknown>();
        const meta: { key: string; value: unknown }[] = [];
        for (const fkey of META_KEYS) {
          const key = fkey.toLowerCase();
          if (!headers.has(key)) continue;
          const value = headers.get(key);
          if (!value) continue;
          meta.push({ key: fkey, value: Array.isArray(value) ? value[value.length - 1] : value });
        }
        if (this.hasHtml) {
          html.push(
            '<table class="mp_head">' +
              meta
                .map(
                  (e) =>
                    `<tr><td class="mp_head_key">${he.encode(e.key)}:</td><td class="mp_head_value">${metaValue(e.key, e.value, true)}<td></tr>`,
                )
                .join('\n') +
              '<table>',
          );
        }
        if (this.hasText) {
          text.push(
            `\n${meta.map((e) => `${e.key}: ${metaValue(e.key, e.value, false)}`).join('\n')}\n`,
          );
        }
      }
      if (node.textContent) {
        if (node.contentType === 'text/plain' || node.contentType === 'message/delivery-status') {
          text.push(node.textContent);
          if (!alternative && this.hasHtml) html.push('');
        } else if (node.contentType === 'text/html') {
          if ((!alternative && this.hasText) || (node.root && !this.hasText)) text.push('');
          html.push(node.textContent);
        }
      }
      const inAlternative = alternative || node.contentType === 'multipart/alternative';
      for (const child of node.children) processNode(inAlternative, child);
    };
    if (this.tree !== undefined) processNode(false, this.tree);
    return {
      html: html.length > 0 ? html.join('<br/>\n') : undefined,
      text: text.length > 0 ? text.join('\n') : undefined,
    };
  }
}

/** Parses a whole message the way mailparser (over mailsplit) did, synchronously. */
export function parseMime(buf: Buffer, opts: ParseMimeOptions): MimeParse {
  const tree = new MailTree(opts.checkpoint);
  new Splitter(tree, opts.maxHeadSize, opts.maxChildNodes).run(buf);
  tree.end();
  const { text, html } = tree.textContent();
  const attachments: MimeAttachment[] = [];
  for (const { tree: node, contentType } of tree.attachments) {
    const decoder = node.decoder as PartDecoder;
    if (!decoder.ended) {
      throw new Error('an attachment part was never ended (mailparser waits for it forever)');
    }
    const contentId = node.headers?.get('content-id');
    attachments.push({
      filename: node.node.filename || undefined,
      contentType,
      contentId: typeof contentId === 'string' ? contentId : undefined,
      content:
        decoder.output.length === 1 ? (decoder.output[0] as Buffer) : Buffer.concat(decoder.output),
    });
  }
  return { headerLines: tree.headerLines, headers: tree.headers, text, html, attachments };
}

/** sha256 of an attachment's content, hex (mailparser's StreamHash with checksumAlgo sha256). */
export function sha256Hex(content: Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

/**
 * A synchronous port of @zone-eu/mailsplit 5.4's MessageSplitter, MimeNode and Headers (the parts
 * mailparser uses), producing the same sequence of nodes and body / data slices for the same bytes.
 *
 * The state machine, the line rules, the 64 KiB input chunks mailparser's ChunkedPassthrough hands
 * the splitter, the pending-line handling across chunks and the way slices are grouped are kept as
 * they are: they decide which bytes end up in which part (missing boundaries, boundaries of a
 * grandparent, line endings in front of delimiters, truncated parts). What changes is the cost: a
 * body line is only looked at when it can be a delimiter (it starts with `--` or CR `--`); runs of
 * other body lines are taken in one step (`Buffer.indexOf`), where mailsplit compares every byte
 * and calls its line handler for every line, through stream and setImmediate machinery.
 */
import { parse as parsePath } from 'node:path';
import { trimEndOf } from '../trim-end.ts';
import { libmime, type StructuredHeader } from './libs.ts';

/** What mailparser's ChunkedPassthrough hands the splitter at a time. */
const SPLIT_CHUNK_BYTES = 64 * 1024;
const MAX_PENDING_LINE_SIZE = 64 * 1024;
const MAX_PENDING_LINE_CHUNKS = 1024;
const BOUNDARY_LINE_OVERHEAD = 2 + 2 + 2 + 2;

const HEAD = 1;
const BODY = 2;

export interface HeaderLine {
  key: string;
  line: string;
}

/** mailsplit's stripComments: drops everything from the first `(` to the last `)` of each line. */
function stripComments(value: string): string {
  if (value.indexOf('(') < 0) return value;
  return value
    .split(/([\n\r\u2028\u2029])/)
    .map((part) => {
      const start = part.indexOf('(');
      if (start < 0) return part;
      const end = part.lastIndexOf(')');
      return end > start ? part.slice(0, start) + part.slice(end + 1) : part;
    })
    .join('');
}

const isFolding = (chr: string): boolean => chr === ' ' || chr === '\t';
const normalizeKey = (key: string): string => key.toLowerCase().trim();

/** mailsplit Headers#_parseHeaders: the logical header lines of a block (binary strings). */
function parseHeaderBlock(block: Buffer): HeaderLine[] {
  // mailsplit's `.replace(/[\r\n]+$/, '')`, without its quadratic retries on a run of line breaks
  const rawLines = trimEndOf(block.toString('binary'), '\r\n').split(/\r?\n/);
  let i = 1;
  let first = rawLines[0] as string;
  while (i < rawLines.length && isFolding((rawLines[i] as string).charAt(0))) {
    first += `\r\n${rawLines[i++] as string}`;
  }
  const lines: HeaderLine[] = [];
  if (!/^From /i.test(first) && !/^POST /i.test(first)) {
    lines.push({ key: normalizeKey(first.substr(0, first.indexOf(':'))), line: first });
  }
  for (; i < rawLines.length; i++) {
    const currentLine = rawLines[i] as string;
    if (isFolding(currentLine.charAt(0))) {
      const entry = lines[lines.length - 1];
      if (entry === undefined) continue; // cannot happen: the first line is never folded
      entry.line += `\r\n${currentLine}`;
      if (!entry.key) entry.key = normalizeKey(entry.line.substr(0, entry.line.indexOf(':')));
    } else {
      lines.push({
        key: normalizeKey(currentLine.substr(0, currentLine.indexOf(':'))),
        line: currentLine,
      });
    }
  }
  return lines;
}

/** mailsplit Headers#_decodeHeaderValue: UTF-8 when that decodes cleanly, else the binary string. */
function decodeHeaderValue(str: string): string {
  if (!str) return str;
  const utf8 = Buffer.from(str, 'binary').toString('utf8');
  return utf8.includes('\uFFFD') ? str : utf8;
}

function getFirst(lines: readonly HeaderLine[], key: string): string {
  const header = lines.find((line) => line.key === key);
  if (!header) return '';
  return (libmime.decodeHeader(decodeHeaderValue(header.line)).value || '').toString().trim();
}

export class MimeNode {
  readonly type = 'node';
  readonly root: boolean;
  readonly parentNode: MimeNode | false;
  parentBoundary: Buffer | false;
  parentBoundaryOwner: MimeNode | false;
  headerChunks: Buffer[] = [];
  headerLength = 0;
  boundary: Buffer | false = false;
  /** The parsed header lines, once the header block is complete. */
  headers: HeaderLine[] | false = false;
  multipart: string | false = false;
  encoding: string | false = false;
  contentType: string | false = false;
  charset: string | false = false;
  disposition: string | false = false;
  filename: string | false = false;
  flowed = false;
  delSp = false;
  rfc822 = false;
  messageNode: boolean | undefined = undefined;

  constructor(parentNode: MimeNode | false) {
    this.root = !parentNode;
    this.parentNode = parentNode;
    this.parentBoundary = parentNode ? parentNode.boundary : false;
    this.parentBoundaryOwner = parentNode || false;
  }

  addHeaderChunk(line: Buffer): void {
    this.headerChunks.push(line);
    this.headerLength += line.length;
  }

  parseHeaders(): void {
    if (this.headers) return;
    const lines = parseHeaderBlock(Buffer.concat(this.headerChunks, this.headerLength));
    this.headers = lines;
    this.headerChunks = [];
    const disposition = libmime.parseHeaderValue(getFirst(lines, 'content-disposition'));
    let contentHeader: string | false | undefined;
    if (lines.some((l) => l.key === 'content-type')) {
      contentHeader = getFirst(lines, 'content-type');
    } else {
      if (disposition.params.filename) {
        const extension = parsePath(disposition.params.filename).ext.replace(/^\./, '');
        if (extension) contentHeader = libmime.detectMimeType(extension);
      }
      if (!contentHeader) {
        contentHeader = /^attachment$/i.test(disposition.value)
          ? 'application/octet-stream'
          : 'text/plain';
      }
    }
    const contentType: StructuredHeader = libmime.parseHeaderValue(contentHeader);
    this.encoding = stripComments(getFirst(lines, 'content-transfer-encoding'))
      .toLowerCase()
      .trim();
    this.contentType = (contentType.value || '').toLowerCase().trim() || false;
    this.charset = contentType.params.charset || false;
    this.disposition = (disposition.value || '').toLowerCase().trim() || false;
    if (this.disposition) {
      try {
        this.disposition = libmime.decodeWords(this.disposition);
      } catch {
        // kept as is, as mailsplit does
      }
    }
    this.filename = disposition.params.filename || contentType.params.name || false;
    const format = contentType.params.format;
    if (format && format.toLowerCase().trim() === 'flowed') {
      this.flowed = true;
      const delsp = contentType.params.delsp;
      if (delsp && delsp.toLowerCase().trim() === 'yes') this.delSp = true;
    }
    if (this.filename) {
      try {
        this.filename = libmime.decodeWords(this.filename);
      } catch {
        // kept as is
      }
    }
    const ct = this.contentType;
    this.multipart =
      (ct && ct.substr(0, ct.indexOf('/')) === 'multipart' && ct.substr(ct.indexOf('/') + 1)) ||
      false;
    this.boundary =
      (contentType.params.boundary && Buffer.from(contentType.params.boundary)) || false;
    this.rfc822 = this.contentType === 'message/rfc822';
  }
}

export interface Slice {
  readonly type: 'body' | 'data';
  readonly node: MimeNode;
  value: Buffer;
}
interface NoGroup {
  readonly type: 'none';
}
const NONE: NoGroup = { type: 'none' };

/** Receives what mailsplit pushes, in order. */
export interface SplitSink {
  node(node: MimeNode): void;
  slice(slice: Slice): void;
  /** Called between input chunks: may throw to give up (time budget). */
  checkpoint(): void;
}

class SplitterError extends Error {
  readonly code = 'EMAXLEN';
}

function trimBodyLineEnd(group: Slice | NoGroup, chunk: Buffer, start: number, end: number) {
  if (group.type !== 'body' || !group.node.parentNode) return end;
  if (end > start && chunk[end - 1] === 0x0a) {
    end--;
    if (end > start && chunk[end - 1] === 0x0d) end--;
  }
  return end;
}

const LF_DASH_DASH = Buffer.from('\n--');
const LF_CR_DASH_DASH = Buffer.from('\n\r--');

/** mailsplit's MessageSplitter, synchronous. */
export class Splitter {
  private node!: MimeNode;
  private state = HEAD;
  private nodeCounter = 0;
  private inEpilogue = false;
  private lineChunks: Buffer[] = [];
  private lineLength = 0;
  private pendingLineTruncated = false;
  /** What the last processLine call answered. */
  private flush = false;

  constructor(
    private readonly sink: SplitSink,
    private readonly maxHeadSize: number,
    private readonly maxChildNodes: number,
  ) {
    this.newNode(false);
  }

  /** Splits the whole message: the same as writing it in 64 KiB chunks and ending the stream. */
  run(buf: Buffer): void {
    for (let off = 0; off < buf.length; off += SPLIT_CHUNK_BYTES) {
      this.transform(buf.subarray(off, off + SPLIT_CHUNK_BYTES));
      this.sink.checkpoint();
    }
    const data = this.processLine(false, true);
    if (data !== null && (data.type === 'node' || data.value.length > 0)) this.push(data);
  }

  private push(item: MimeNode | Slice): void {
    if (item.type === 'node') this.sink.node(item);
    else this.sink.slice(item);
  }

  private appendPendingLine(chunk: Buffer): void {
    if (!chunk.length) return;
    this.lineChunks.push(chunk);
    this.lineLength += chunk.length;
    if (this.lineChunks.length >= MAX_PENDING_LINE_CHUNKS) {
      this.lineChunks = [Buffer.concat(this.lineChunks, this.lineLength)];
    }
  }

  private takePendingLine(): Buffer | false {
    if (!this.lineLength) return false;
    const line =
      this.lineChunks.length === 1
        ? (this.lineChunks[0] as Buffer)
        : Buffer.concat(this.lineChunks, this.lineLength);
    this.lineChunks = [];
    this.lineLength = 0;
    return line;
  }

  private transform(chunk: Buffer): void {
    let pos = 0;
    let i = 0;
    let group: Slice | NoGroup = NONE;
    let groupstart = this.lineLength ? -this.lineLength : 0;
    let groupend = 0;
    // cached positions of the next "\n--" and "\n\r--" at or after the line start searched from
    let nextDash = -2;
    let nextCrDash = -2;
    const len = chunk.length;

    const checkTrailingLinebreak = (data: Slice): void => {
      if (data.type === 'body' && data.node.parentNode && data.value.length > 0) {
        const v = data.value;
        if (v[v.length - 1] === 0x0a) {
          groupstart--;
          groupend--;
          pos--;
          if (v.length > 1 && v[v.length - 2] === 0x0d) {
            groupstart--;
            groupend--;
            pos--;
            if (groupstart < 0 && !this.lineLength) this.appendPendingLine(Buffer.from([0x0d]));
            data.value = v.subarray(0, v.length - 2);
          } else {
            data.value = v.subarray(0, v.length - 1);
          }
        } else if (v[v.length - 1] === 0x0d) {
          groupstart--;
          groupend--;
          pos--;
          data.value = v.subarray(0, v.length - 1);
        }
      }
    };

    while (i < len) {
      // fast path: a run of body lines that cannot be delimiters, appended to the current group
      if (
        this.state === BODY &&
        pos === i &&
        groupstart >= 0 &&
        this.lineLength === 0 &&
        !this.pendingLineTruncated &&
        this.nodeCounter <= this.maxChildNodes &&
        group.type === (this.node.multipart ? 'data' : 'body')
      ) {
        let candidate: number;
        const c0 = chunk[i];
        if (
          (c0 === 0x2d && chunk[i + 1] === 0x2d) ||
          (c0 === 0x0d && chunk[i + 1] === 0x2d && chunk[i + 2] === 0x2d)
        ) {
          candidate = i;
        } else {
          if (nextDash !== -1 && nextDash < i) nextDash = chunk.indexOf(LF_DASH_DASH, i);
          if (nextCrDash !== -1 && nextCrDash < i) nextCrDash = chunk.indexOf(LF_CR_DASH_DASH, i);
          const a = nextDash < 0 ? len : nextDash + 1;
          const b = nextCrDash < 0 ? len : nextCrDash + 1;
          candidate = Math.min(a, b);
        }
        if (candidate > i) {
          let end = candidate;
          if (candidate >= len) {
            end = chunk.lastIndexOf(0x0a) + 1;
            if (end <= i) end = i;
          }
          if (end > i) {
            i = end;
            pos = end;
            groupend = end;
            continue;
          }
        }
      }

      const lf = chunk.indexOf(0x0a, i);
      if (lf < 0) {
        i = len;
        break;
      }
      const start = Math.max(pos, 0);
      i = lf + 1;
      pos = i;
      const data = this.processLine(chunk.subarray(start, i), false);
      if (data === null) continue;
      if (this.flush) {
        if (group.type !== 'none') {
          groupend = trimBodyLineEnd(group, chunk, groupstart, groupend);
          if (groupstart < groupend) {
            group.value = chunk.subarray(groupstart, groupend);
            if (groupend < i && data.type !== 'node') data.value = chunk.subarray(groupend, i);
          }
          this.push(group);
          group = NONE;
          groupstart = groupend = i;
        }
        this.push(data);
        groupend = i;
        continue;
      }
      if (data.type === group.type) {
        groupend = i;
        continue;
      }
      groupend = trimBodyLineEnd(group, chunk, groupstart, groupend);
      if (group.type !== 'none' && groupstart !== groupend) {
        group.value = chunk.subarray(groupstart, groupend);
        if (group.value.length) {
          this.push(group);
          group = NONE;
        }
      }
      if (data.type === 'node') {
        this.push(data);
        groupstart = i;
        groupend = i;
      } else if (groupstart < 0) {
        groupstart = i;
        groupend = i;
        checkTrailingLinebreak(data);
        if (data.value.length) this.push(data);
      } else {
        group = data;
        groupstart = groupend;
        groupend = i;
      }
    }

    pos = trimBodyLineEnd(group, chunk, groupstart, pos);
    if (group.type !== 'none' && pos > groupstart) {
      group.value = chunk.subarray(groupstart, pos);
      if (group.value.length) {
        this.push(group);
        group = NONE;
      }
    }
    if (pos < len) this.appendPendingLine(chunk.subarray(Math.max(pos, 0)));
    this.enforcePendingLineLimit();
  }

  private compareBoundary(line: Buffer, startpos: number, boundary: Buffer): 1 | 2 | false {
    if (
      line.length < boundary.length + 3 + startpos ||
      line.length > boundary.length + 6 + startpos
    ) {
      return false;
    }
    for (let i = 0; i < boundary.length; i++) {
      if (line[i + 2 + startpos] !== boundary[i]) return false;
    }
    let pos = 0;
    for (let i = boundary.length + 2 + startpos; i < line.length; i++) {
      const c = line[i];
      if (pos === 0 && (c === 0x0d || c === 0x0a)) return 1;
      if (pos === 0 && c !== 0x2d) return false;
      if (pos === 1 && c !== 0x2d) return false;
      if (pos === 2 && c !== 0x0d && c !== 0x0a) return false;
      if (pos === 3 && c !== 0x0a) return false;
      pos++;
    }
    return 2;
  }

  private checkBoundary(line: Buffer): 1 | 2 | 3 | 4 | false {
    let startpos = 0;
    if (line.length >= 1 && (line[0] === 0x0d || line[0] === 0x0a)) {
      startpos++;
      if (line.length >= 2 && line[0] === 0x0d && line[1] === 0x0a) startpos++;
    }
    if (line.length < 4 || line[startpos] !== 0x2d || line[startpos + 1] !== 0x2d) return false;
    if (!this.inEpilogue && this.node.boundary) {
      const own = this.compareBoundary(line, startpos, this.node.boundary);
      if (own) return own;
    }
    if (this.node.parentBoundary) {
      const parent = this.compareBoundary(line, startpos, this.node.parentBoundary);
      if (parent) return (parent + 2) as 3 | 4;
    }
    return false;
  }

  private checkHeadSize(extra = 0): void {
    if (this.node.headerLength + extra > this.maxHeadSize) {
      throw new SplitterError('Max header size for a MIME node exceeded');
    }
  }

  private enforcePendingLineLimit(): void {
    if (!this.lineLength) return;
    const maxBoundaryLength = Math.max(
      this.node.boundary ? this.node.boundary.length : 0,
      this.node.parentBoundary ? this.node.parentBoundary.length : 0,
    );
    if (this.lineLength <= maxBoundaryLength + BOUNDARY_LINE_OVERHEAD) return;
    if (this.state === HEAD) {
      this.checkHeadSize(this.lineLength);
      return;
    }
    if (this.lineLength < MAX_PENDING_LINE_SIZE) return;
    let value = this.takePendingLine() as Buffer;
    if (value[value.length - 1] === 0x0d) {
      this.appendPendingLine(Buffer.from([0x0d]));
      value = value.subarray(0, value.length - 1);
    }
    this.push({ node: this.node, type: this.node.multipart ? 'data' : 'body', value });
    this.pendingLineTruncated = true;
  }

  /** mailsplit's processLine: what to push for this line (and `this.flush`), or null. */
  private processLine(line: Buffer | false, final: boolean): MimeNode | Slice | null {
    this.flush = false;
    const truncatedLine = this.pendingLineTruncated;
    this.pendingLineTruncated = false;
    const pending = this.takePendingLine();
    if (pending) line = line ? Buffer.concat([pending, line]) : pending;
    if (!line) line = Buffer.alloc(0);
    if (this.nodeCounter > this.maxChildNodes) {
      throw new SplitterError('Max allowed child nodes exceeded');
    }
    const boundary = truncatedLine ? false : this.checkBoundary(line);
    if (boundary) {
      switch (boundary) {
        case 1:
          this.newNode(this.node);
          this.flush = true;
          break;
        case 2:
          break;
        case 3:
          this.newNode(this.node.parentBoundaryOwner);
          this.flush = true;
          break;
        case 4: {
          if (this.node?.headerLength && !this.node.headers) {
            this.node.parseHeaders();
            this.push(this.node);
          }
          const parentNode = this.node.parentBoundaryOwner;
          if (parentNode) {
            this.node = parentNode;
            this.inEpilogue = true;
          }
          this.state = BODY;
          break;
        }
      }
      return { node: this.node, type: 'data', value: line };
    }
    if (this.state === HEAD) {
      this.node.addHeaderChunk(line);
      this.checkHeadSize();
      if (
        final ||
        (line.length === 1 && line[0] === 0x0a) ||
        (line.length === 2 && line[0] === 0x0d && line[1] === 0x0a)
      ) {
        const currentNode = this.node;
        currentNode.parseHeaders();
        if (
          currentNode.contentType === 'message/rfc822' &&
          (!currentNode.encoding || ['7bit', '8bit', 'binary'].includes(currentNode.encoding)) &&
          currentNode.disposition === 'inline'
        ) {
          currentNode.messageNode = true;
          this.newNode(currentNode);
          if (currentNode.parentNode) {
            this.node.parentBoundary = currentNode.parentNode.boundary;
            this.node.parentBoundaryOwner = currentNode.parentNode;
          }
        } else {
          if (currentNode.contentType === 'message/rfc822') currentNode.messageNode = false;
          this.state = BODY;
        }
        return currentNode;
      }
      return null;
    }
    return { node: this.node, type: this.node.multipart ? 'data' : 'body', value: line };
  }

  private newNode(parent: MimeNode | false): void {
    this.node = new MimeNode(parent || false);
    this.state = HEAD;
    this.nodeCounter++;
    this.inEpilogue = false;
  }
}

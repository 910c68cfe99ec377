import {
  closeSync,
  createReadStream,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  statSync,
} from 'node:fs';
import { join } from 'node:path';
import { badSource } from './errors.ts';

/** One raw message read from a training path. */
export interface RawMessage {
  /** File, or `mbox:N` within an mbox. */
  name: string;
  raw: Buffer;
}

function isMaildir(dir: string): boolean {
  try {
    return statSync(join(dir, 'cur')).isDirectory() && statSync(join(dir, 'new')).isDirectory();
  } catch {
    return false;
  }
}

/** Whether a file starts as an mbox does (`From ` at its first line). */
function looksLikeMbox(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    const b = Buffer.alloc(5);
    const n = readSync(fd, b, 0, 5, 0);
    return b.subarray(0, n).toString('latin1') === 'From ';
  } finally {
    closeSync(fd);
  }
}

/** Every message file under a folder (a maildir's cur/ and new/, or .eml files, recursively). */
function listFiles(dir: string, out: string[]): void {
  if (isMaildir(dir)) {
    for (const sub of ['cur', 'new'])
      for (const f of readdirSync(join(dir, sub)).sort())
        if (!f.startsWith('.')) out.push(join(dir, sub, f));
  }
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    if (e.name.startsWith('.')) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (!['cur', 'new', 'tmp'].includes(e.name) || !isMaildir(dir)) listFiles(p, out);
    } else if (e.isFile() && /\.(eml|msg|mbox)$/i.test(e.name)) out.push(p);
  }
}

/** The message files and mbox files of a training path. */
function trainingFiles(path: string): string[] {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(path);
  } catch {
    throw badSource(`${path}: no such file or folder`);
  }
  if (st.isFile()) return [path];
  if (!st.isDirectory()) throw badSource(`${path}: neither a file nor a folder`);
  const out: string[] = [];
  listFiles(path, out);
  return out;
}

/**
 * The messages of an mbox (mboxrd/mboxo): split at lines starting `From `, the envelope line
 * dropped, `>From ` unquoted one level.
 */
export async function* mboxMessages(file: string): AsyncGenerator<RawMessage> {
  let buf: Buffer = Buffer.alloc(0);
  let n = 0;
  let current: Buffer[] = [];
  let started = false;
  const flush = function* (): Generator<RawMessage> {
    if (started && current.length) {
      n++;
      yield { name: `${file}:${n}`, raw: Buffer.concat(current) };
    }
    current = [];
  };
  const line = function* (l: Buffer): Generator<RawMessage> {
    if (l.subarray(0, 5).toString('latin1') === 'From ') {
      yield* flush();
      started = true;
      return;
    }
    if (!started) return;
    current.push(/^>+From /.test(l.subarray(0, 64).toString('latin1')) ? l.subarray(1) : l);
  };
  for await (const chunk of createReadStream(file)) {
    buf = buf.length ? Buffer.concat([buf, chunk as Buffer]) : (chunk as Buffer);
    let at = 0;
    for (;;) {
      const nl = buf.indexOf(10, at);
      if (nl < 0) break;
      yield* line(buf.subarray(at, nl + 1));
      at = nl + 1;
    }
    buf = buf.subarray(at);
  }
  if (buf.length) yield* line(buf);
  yield* flush();
}

/** Every message of a training path: a folder of .eml, a maildir, an mbox, or one file. */
export async function* messagesOf(path: string): AsyncGenerator<RawMessage> {
  for (const f of trainingFiles(path)) {
    if (looksLikeMbox(f)) yield* mboxMessages(f);
    else yield { name: f, raw: readFileSync(f) };
  }
}

/** How many messages a path holds (mbox files counted by their `From ` lines), for progress. */
export async function countMessages(path: string): Promise<number> {
  let n = 0;
  for (const f of trainingFiles(path)) {
    if (!looksLikeMbox(f)) {
      n++;
      continue;
    }
    const text = readFileSync(f, 'latin1');
    n += (text.startsWith('From ') ? 1 : 0) + (text.match(/\nFrom /g)?.length ?? 0);
  }
  return n;
}

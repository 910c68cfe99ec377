import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream/promises';
import type { ClassifierRepository, ClassifierTotals } from '@trawl/platform';
import { z } from 'zod';
import { badState, tokenizerMismatch } from './errors.ts';
import { MemoryModel } from './model.ts';
import { TOKENIZER } from './tokenize.ts';

/**
 * The exported state (`trawl learn --export FILE`): JSON lines. The first line is the header below;
 * every other line is `[token, phishing, ham]`. Versioned by `format` and the tokeniser's name;
 * `version` is the state's own (moves on with every change).
 */
export const ClassifierStateFile = z.object({
  format: z.literal('trawl-classifier'),
  format_version: z.literal(1),
  tokenizer: z.string().min(1),
  version: z.number().int().nonnegative(),
  phishing_messages: z.number().int().nonnegative(),
  ham_messages: z.number().int().nonnegative(),
  tokens: z.number().int().nonnegative(),
  exported_at: z.string(),
});
export type ClassifierStateFile = z.infer<typeof ClassifierStateFile>;

const TokenLine = z.tuple([
  z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  z.number().int().nonnegative(),
  z.number().int().nonnegative(),
]);

/** Writes the store's state to `file` (the header first); answers its header. */
export async function exportState(
  store: Pick<ClassifierRepository, 'totals' | 'tokens'>,
  file: string,
): Promise<ClassifierStateFile> {
  const totals = await store.totals();
  // the tokens go to a file beside it first: the header, which counts them, comes first
  const body = `${file}.${process.pid}.tokens`;
  let n = 0;
  try {
    const out = createWriteStream(body, { encoding: 'utf8', mode: 0o600 });
    for await (const page of store.tokens()) {
      const text = `${page.map(([t, p, h]) => `[${t},${p},${h}]`).join('\n')}\n`;
      n += page.length;
      if (!out.write(text)) await once(out, 'drain');
    }
    out.end();
    await once(out, 'close');
    const header: ClassifierStateFile = {
      format: 'trawl-classifier',
      format_version: 1,
      tokenizer: totals.tokenizer || TOKENIZER,
      version: totals.version,
      phishing_messages: totals.phishing,
      ham_messages: totals.ham,
      tokens: n,
      exported_at: new Date().toISOString(),
    };
    const dest = createWriteStream(file, { encoding: 'utf8', mode: 0o600 });
    dest.write(`${JSON.stringify(header)}\n`);
    await pipeline(createReadStream(body), dest);
    return header;
  } finally {
    await rm(body, { force: true });
  }
}

/** Reads an exported state file: its header and its token lines, validated. */
async function readStateFile(
  file: string,
): Promise<{ header: ClassifierStateFile; tokens: [number, number, number][] }> {
  const rl = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
  let header: ClassifierStateFile | undefined;
  const tokens: [number, number, number][] = [];
  let line = 0;
  for await (const text of rl) {
    line++;
    if (!text.trim()) continue;
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      throw badState(`${file}:${line}: not JSON`);
    }
    if (!header) {
      const h = ClassifierStateFile.safeParse(v);
      if (!h.success)
        throw badState(`${file}: not an exported classifier state (${h.error.message})`);
      header = h.data;
      continue;
    }
    const t = TokenLine.safeParse(v);
    if (!t.success) throw badState(`${file}:${line}: not a [token, phishing, ham] line`);
    tokens.push(t.data);
  }
  if (!header) throw badState(`${file}: empty`);
  if (tokens.length !== header.tokens)
    throw badState(`${file}: holds ${tokens.length} tokens, its header says ${header.tokens}`);
  return { header, tokens };
}

/** Replaces the store's state by an exported one (same tokeniser only). */
export async function importState(
  store: Pick<ClassifierRepository, 'replace'>,
  file: string,
): Promise<ClassifierTotals> {
  const { header, tokens } = await readStateFile(file);
  if (header.tokenizer !== TOKENIZER) throw tokenizerMismatch(header.tokenizer, TOKENIZER);
  return store.replace({
    tokenizer: header.tokenizer,
    phishing: header.phishing_messages,
    ham: header.ham_messages,
    tokens,
  });
}

/** A model in memory from an exported state file (the eval's `--classifier-state`). */
export async function modelOfState(file: string): Promise<MemoryModel> {
  const { header, tokens } = await readStateFile(file);
  if (header.tokenizer !== TOKENIZER) throw tokenizerMismatch(header.tokenizer, TOKENIZER);
  const m = new MemoryModel();
  for (const [t, p, h] of tokens) m.set(t, p, h);
  m.phishing = header.phishing_messages;
  m.ham = header.ham_messages;
  m.version = header.version;
  return m;
}

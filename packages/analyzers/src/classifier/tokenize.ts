import type { Email } from '@trawl/contracts';
import { viewOf } from '../shared/view.ts';

/**
 * The classifier's tokens: OSB features (orthogonal sparse bigrams over a window of 5, as CRM114 and
 * Rspamd build them: each word, and each word paired with each of the 4 words before it, the
 * distance part of the pair) of the subject and of the body text, plus the link hosts and
 * registrable domains, the sender's and Reply-To's domains, the words of the display name and the
 * attachments' extensions. Nothing that tells how or when a message was collected (Received, Date,
 * Message-ID, X-Mailer, line endings, which signatures it carries): a model of those would learn
 * the collection, not the mail. Each feature is hashed to a 30-bit number (what the store keeps).
 */
export const TOKENIZER = 'osb5-v1';

/** Words of the body read (a long message says what it is in its first few thousand words). */
const MAX_BODY_WORDS = 3000;
const MAX_WORD = 32;
const WINDOW = 5;

const WORD_RE = /[\p{L}\p{N}][\p{L}\p{N}'’_-]*/gu;
const DIGITS_RE = /\d/g;

/** Words of a text, lower-cased; digits folded to 0 (an amount or a date is one token each). */
function wordsOf(text: string, max: number): string[] {
  const out: string[] = [];
  for (const m of text.toLowerCase().matchAll(WORD_RE)) {
    let w = m[0];
    if (w.length > MAX_WORD) w = `${w.slice(0, MAX_WORD)}…`;
    out.push(w.replace(DIGITS_RE, '0'));
    if (out.length >= max) break;
  }
  return out;
}

/** 32-bit FNV-1a of a string (UTF-16 code units), with a seed. */
function fnv(s: string, seed: number): number {
  let h = seed >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  // a final mix so that the low bits depend on every character
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h >>> 0;
}

/**
 * A feature's token: 30 bits of a 32-bit hash, so that tokens are small integers to V8 (map keys
 * without allocation; the lookups are the hot path). Among a million tokens about 500 pairs
 * collide: noise a Bayes filter does not notice (CRM114 keeps 32 bits).
 */
function hashFeature(f: string): number {
  return fnv(f, 0x811c9dc5) & 0x3fffffff;
}

/** OSB features of a word sequence under a prefix: unigrams and the 4 skip-pairs of each word. */
function osbFeatures(words: readonly string[], prefix: string, out: string[]): void {
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    out.push(`${prefix}${w}`);
    for (let d = 1; d < WINDOW && d <= i; d++)
      out.push(`${prefix}${words[i - d]}\u0001${d}\u0001${w}`);
  }
}

/** The features of a message as text (for tests and explanations). */
export function featuresOf(email: Email): string[] {
  const v = viewOf(email);
  const out: string[] = [];
  osbFeatures(wordsOf(v.subject, 64), 's:', out);
  osbFeatures(wordsOf(v.text, MAX_BODY_WORDS), 'b:', out);
  for (const u of v.urls.slice(0, 100)) {
    if (u.host) out.push(`h:${u.host}`);
    if (u.domain) out.push(`d:${u.domain}`);
    if (!u.host) out.push(`u:${u.scheme}`);
  }
  if (v.from.org_domain) out.push(`f:${v.from.org_domain}`);
  for (const w of wordsOf(v.from.display_name, 8)) out.push(`n:${w}`);
  for (const r of v.reply_to.slice(0, 3)) if (r.org_domain) out.push(`r:${r.org_domain}`);
  for (const a of v.attachments.slice(0, 20)) {
    out.push(`a:${a.extensions[0] ?? ''}`);
    out.push(`k:${a.kind}`);
  }
  return out;
}

/** The distinct tokens of a message (a message counts once per token, as in Bayes filters). */
export function tokensOf(email: Email): number[] {
  const set = new Set<number>();
  for (const f of featuresOf(email)) set.add(hashFeature(f));
  return [...set];
}

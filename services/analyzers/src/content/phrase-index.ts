/**
 * Fast phrase matching on word tokens: a phrase list is indexed by its first token, so a text is
 * scanned once in O(tokens), whatever the number of phrases. A trailing `*` on a phrase's last word
 * matches any word that starts with it ("verif*").
 */

const TOKEN_RE = /[\p{L}\p{N}]+(?:'[\p{L}]+)?/gu;

/** Max tokens scanned per text (keeps matching bounded on huge bodies). */
export const MAX_TOKENS = 12_000;

export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(TOKEN_RE)) {
    out.push(m[0]);
    if (out.length >= MAX_TOKENS) break;
  }
  return out;
}

interface Entry {
  key: string;
  /** Tokens after the first. */
  rest: string[];
  /** The last token is a prefix (phrase ended with *). */
  stem: boolean;
  label: string;
}

export class PhraseIndex {
  private readonly byFirst = new Map<string, Entry[]>();
  /** Single-token stems, by their first 3 characters. */
  private readonly stems = new Map<string, Entry[]>();
  size = 0;

  /** `tokens` are the phrase's tokens (same tokenizer as the text); `key` is what a hit reports. */
  add(tokens: string[], key: string, label: string, stem = false): void {
    if (tokens.length === 0) return;
    this.size++;
    const [first, ...rest] = tokens as [string, ...string[]];
    if (stem && rest.length === 0) {
      const k = first.slice(0, 3);
      const list = this.stems.get(k) ?? [];
      list.push({ key, rest: [first], stem: true, label });
      this.stems.set(k, list);
      return;
    }
    const list = this.byFirst.get(first) ?? [];
    list.push({ key, rest, stem, label });
    this.byFirst.set(first, list);
  }

  /** Hits as (key, label) pairs, with the number of times each key was found; bounded. */
  scan(tokens: readonly string[], maxHits = 500): Map<string, { label: string; count: number }> {
    const out = new Map<string, { label: string; count: number }>();
    let hits = 0;
    const hit = (e: Entry) => {
      const prev = out.get(e.key);
      if (prev) prev.count++;
      else out.set(e.key, { label: e.label, count: 1 });
      hits++;
    };
    for (let i = 0; i < tokens.length && hits < maxHits; i++) {
      const t = tokens[i]!;
      const list = this.byFirst.get(t);
      if (list) {
        for (const e of list) {
          let ok = true;
          for (let j = 0; j < e.rest.length; j++) {
            const tok = tokens[i + 1 + j];
            const want = e.rest[j]!;
            const last = j === e.rest.length - 1;
            if (tok === undefined || !(tok === want || (last && e.stem && tok.startsWith(want)))) {
              ok = false;
              break;
            }
          }
          if (ok) hit(e);
        }
      }
      if (this.stems.size > 0 && t.length >= 3) {
        const sl = this.stems.get(t.slice(0, 3));
        if (sl) for (const e of sl) if (t.startsWith(e.rest[0]!)) hit(e);
      }
    }
    return out;
  }
}

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { corpusDir } from '@trawl/config';

export interface CorpusMessage {
  name: string;
  label: 'phishing' | 'ham';
  raw: Buffer;
}

/**
 * The raw messages of `<repo>/../shared/corpus` (phishing/ and ham/), read in place into memory to be
 * posted to the gateway (which parses them); null when the corpus is absent. `limit` keeps the first
 * n of each half.
 */
export function loadCorpus(limit?: number): CorpusMessage[] | null {
  const dir = corpusDir();
  if (!dir) return null;
  const out: CorpusMessage[] = [];
  for (const label of ['phishing', 'ham'] as const) {
    let names: string[];
    try {
      names = readdirSync(join(dir, label)).filter((n) => n.endsWith('.eml'));
    } catch {
      continue;
    }
    names.sort();
    for (const name of limit === undefined ? names : names.slice(0, limit)) {
      out.push({ name, label, raw: readFileSync(join(dir, label, name)) });
    }
  }
  return out.length > 0 ? out : null;
}

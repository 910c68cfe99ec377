import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sharedCorpus } from '../../../../test/support/require-component.ts';
import { parseRawEmail } from '../../src/index.ts';
import { legacyParseRawEmail } from '../reference/legacy-parse-raw-email.ts';

// Every corpus message gives the same Email (or the same error) through src/mime as through the
// mailparser-based reference (test/reference), with the options bench:mail and the e2e bench use.

const corpus = sharedCorpus() ?? '';
const present = corpus !== '';

async function outcome(run: () => Promise<unknown>): Promise<string> {
  try {
    return JSON.stringify({ e: await run() });
  } catch (err) {
    return JSON.stringify({ err: (err as { code?: string }).code, msg: (err as Error).message });
  }
}

describe.skipIf(!present)('corpus: src/mime answers what mailparser answered', () => {
  it('gives identical output for every message of ../shared/corpus', async () => {
    const opts = {
      envelope: { to: ['mailbox@bench.invalid'] },
      receivedAt: new Date('2026-01-01T00:00:00Z'),
    };
    const different: string[] = [];
    let n = 0;
    for (const label of ['phishing', 'ham']) {
      for (const f of readdirSync(join(corpus, label)).sort()) {
        if (!f.endsWith('.eml')) continue;
        const raw = readFileSync(join(corpus, label, f));
        n++;
        const ours = await outcome(() => parseRawEmail(raw, opts));
        const ref = await outcome(() => legacyParseRawEmail(raw, opts));
        if (ours !== ref) different.push(`${label}/${f}`);
      }
    }
    console.log(`corpus parity: ${n - different.length}/${n} identical`);
    expect(different).toEqual([]);
  });
});

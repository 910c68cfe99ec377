import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { findRepoRoot } from '@trawl/config';
import { Email } from '@trawl/contracts';
import { emailId, parseRawEmail } from '@trawl/mail';
import { describe, expect, it } from 'vitest';
import { serializeEmail } from '../../src/email-json.ts';
import { sampleEmail } from '../fixtures/email.ts';

const CORPUS = join(findRepoRoot(), '..', 'shared', 'corpus');

function check(email: Email): void {
  const s = serializeEmail(email);
  expect(s.id).toBe(emailId(email));
  expect(JSON.parse(s.json)).toEqual(JSON.parse(JSON.stringify(email)));
}

describe('serializeEmail', () => {
  it('gives emailId and the JSON of the Email', () => {
    check(Email.parse(sampleEmail()));
    check(Email.parse({ ...sampleEmail(), analysis_context: { b: 1, a: { z: [1, 'x'] } } }));
  });

  it('does not depend on key order, and ignores analysis_context for the id', () => {
    const a = Email.parse(sampleEmail());
    const reordered = Email.parse(
      Object.fromEntries(Object.entries({ ...sampleEmail() }).reverse()),
    );
    const withContext = Email.parse({ ...sampleEmail(), analysis_context: { k: 'v' } });
    expect(serializeEmail(reordered).id).toBe(serializeEmail(a).id);
    expect(serializeEmail(withContext).id).toBe(serializeEmail(a).id);
  });

  it('matches emailId with integer-like, unicode and escaped keys and values', () => {
    const e = Email.parse({
      ...sampleEmail(),
      headers: {
        ...sampleEmail().headers,
        subject: 'Ünïcødé "quoted" \\ \u2028 \ud83d\ude00',
        raw_headers: { '10': 'a', '9': 'b', 'x-b': 'c', 'X-A': 'd', é: 'e', '"q"': 'f' },
      },
      attachments: [{ filename: 'a.txt', content: 'aGVsbG8=', content_type: 'text/plain' }],
      language: 'en',
      analysis_context: { '1': { '0': null } },
    });
    check(e);
  });

  it.skipIf(!existsSync(CORPUS))('matches emailId on 80 corpus messages', async () => {
    const files: string[] = [];
    for (const kind of ['phishing', 'ham']) {
      const d = join(CORPUS, kind);
      if (!existsSync(d)) continue;
      const names = readdirSync(d).filter((n) => n.endsWith('.eml'));
      files.push(...names.slice(0, 40).map((n) => join(d, n)));
    }
    let checked = 0;
    for (const f of files) {
      let email: Email;
      try {
        email = await parseRawEmail(readFileSync(f));
      } catch {
        continue;
      }
      check(email);
      checked++;
    }
    expect(checked).toBeGreaterThan(0);
  });
});

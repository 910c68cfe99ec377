import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Email } from '@trawl/contracts';
import { emailId, parseRawEmail } from '@trawl/mail';
import { describe, expect, it } from 'vitest';
import { sharedCorpus } from '../../../../test/support/require-component.ts';
import { serializeEmail, submittedEmailJson } from '../../src/email-json.ts';
import { sampleEmail } from '../fixtures/email.ts';

const CORPUS = sharedCorpus() ?? '';

function check(email: Email): void {
  const s = serializeEmail(email);
  expect(s.id).toBe(emailId(email));
  expect(JSON.parse(s.json)).toEqual(JSON.parse(JSON.stringify(email)));
}

/** What the JSON route does with a body: parse, validate, serialise with the body's text. */
function submit(body: string): { email: Email; json: string; fromBody: boolean } {
  const input = (JSON.parse(body.replace(/^\ufeff/, '')) as { email: unknown }).email;
  const email = Email.parse(input);
  const fromBody = submittedEmailJson(body, input, email);
  const s = serializeEmail(email, { body, input });
  expect(s.id).toBe(emailId(email));
  expect(s.json).toBe(fromBody ?? JSON.stringify(email));
  // whatever the path, the row's text is the validated Email, exactly
  expect(JSON.parse(s.json)).toStrictEqual(JSON.parse(JSON.stringify(email)));
  return { email, json: s.json, fromBody: fromBody !== undefined };
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

  it('handles integer-like, unicode and escaped keys and values', () => {
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

  it.skipIf(CORPUS === '')('gives emailId and the JSON on 80 corpus messages', async () => {
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
      // the same Email submitted as JSON, as sent: its row text is cut from the body
      const r = submit(JSON.stringify({ email: JSON.parse(JSON.stringify(email)) }));
      expect(r.fromBody).toBe(true);
      checked++;
    }
    expect(checked).toBeGreaterThan(0);
  });
});

describe('submittedEmailJson (the JSON route keeps the body text)', () => {
  const e = sampleEmail();

  it('cuts the email member out of the body, with the default analysis_context put in front', () => {
    const body = JSON.stringify({ workflow_id: 'quick', email: e });
    const r = submit(body);
    expect(r.fromBody).toBe(true);
    expect(r.json).toBe(`{"analysis_context":{},${JSON.stringify(e).slice(1)}`);
  });

  it('keeps a sent analysis_context, spacing, escapes and a byte order mark as they were', () => {
    const email = { ...e, analysis_context: { s: { n: 1, a: [true, null] } } };
    const pretty = `\ufeff {\n  "email" : ${JSON.stringify(email, null, 2)} ,\n  "workflow_id":"quick"\n}\n`;
    const r = submit(pretty);
    expect(r.fromBody).toBe(true);
    expect(r.json).toBe(JSON.stringify(email, null, 2));
    const escaped = JSON.stringify({
      email: { ...e, body_text: 'a "b" \\ \u0001 é \ud83d\ude00 }{][' },
    })
      .replace('é', '\\u00e9')
      .replace('Verify', 'Ver\\u0069fy');
    const r2 = submit(escaped);
    expect(r2.fromBody).toBe(true);
    expect(r2.email.body_text).toBe('a "b" \\ \u0001 é \ud83d\ude00 }{][');
    expect(r2.email.headers.subject).toBe('Verify your account');
  });

  it('stringifies the validated Email when the schema changed what was sent', () => {
    // unknown members are dropped, an attachment gets its default content type and its size
    const cases = [
      { ...e, extra: 'dropped' },
      { ...e, headers: { ...e.headers, extra: 1 } },
      { ...e, attachments: [{ filename: 'a.txt', content: 'aGVsbG8=' }] },
      {
        ...e,
        attachments: [{ filename: 'a.txt', content_type: 'text/plain', content: 'aGVsbG8=' }],
      },
    ];
    for (const email of cases) expect(submit(JSON.stringify({ email })).fromBody).toBe(false);
    // with everything the schema would add already there, the body's text is kept
    const full = {
      ...e,
      attachments: [
        { filename: 'a.txt', content_type: 'text/plain', size: 5, content: 'aGVsbG8=' },
      ],
    };
    expect(submit(JSON.stringify({ email: full })).fromBody).toBe(true);
  });

  it('does not trust a body whose email member could be read two ways', () => {
    const one = JSON.stringify(e);
    const other = JSON.stringify({ ...e, body_text: 'the last one wins' });
    // a repeated member (JSON.parse keeps the last) and an escaped key that spells "email"
    const dup = submit(`{"email":${one},"email":${other}}`);
    expect(dup.fromBody).toBe(false);
    expect(dup.email.body_text).toBe('the last one wins');
    const esc = submit(`{"email":${one},"\\u0065mail":${other}}`);
    expect(esc.fromBody).toBe(false);
    expect(esc.email.body_text).toBe('the last one wins');
    // nested repeats are read the same way from the cut text, so they may stay
    const nested = `{"email":${one.slice(0, -1)},"body_text":"again"}}`;
    const n = submit(nested);
    expect(n.email.body_text).toBe('again');
    expect(n.fromBody).toBe(true);
  });
});

import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedCorpus } from '../../../../test/support/require-component.ts';
import type { SmtpFilterService } from '../../src/index.ts';
import {
  type SmtpSink,
  startInlineMilter,
  startSmtpSink,
  startTestPostfix,
  startTrawlStack,
  type TestPostfix,
  type TrawlStack,
} from '../../src/testing/index.ts';
import {
  client,
  ports,
  postfixHere,
  startFilter,
  startMilterFilter,
  stopAll,
} from '../helpers/harness.ts';

const runHere = postfixHere();

const FIXTURES = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  'fixtures',
  'milter-vs-filter',
);
/** Messages of the shared corpus taken (read in place: the first of each folder by name). */
const FROM_CORPUS = 6;
const QUARANTINE = 'quarantine@trawl.test';
/**
 * One policy for both (before the queue: reject is a refusal), chosen so that the messages reach
 * more than a plain delivery: clean mail is prefixed (the milter changes the Subject in place, the
 * content filter rewrites the header), critical is refused.
 */
const POLICY = 'none=prefix,low=deliver,medium=quarantine,high=quarantine,critical=reject';
const ENVELOPE = { from: 'sender@origin.example', to: ['bob@example.org'] };
const PREFIX = '[SUSPECTED PHISHING]';

interface Seen {
  action: 'deliver' | 'prefix' | 'quarantine' | 'reject' | 'tempfail' | 'other';
  verdict?: string | undefined;
  threat?: string | undefined;
}

/** The messages: the fixtures, and a few of the shared corpus when it is beside the repository. */
function messages(): { name: string; raw: Buffer }[] {
  const out = readdirSync(FIXTURES)
    .sort()
    .map((f) => ({ name: f, raw: readFileSync(join(FIXTURES, f)) }));
  const corpus = sharedCorpus();
  if (corpus) {
    for (const kind of ['ham', 'phishing']) {
      const dir = join(corpus, kind);
      for (const f of readdirSync(dir)
        .sort()
        .slice(0, FROM_CORPUS / 2)) {
        out.push({ name: `corpus/${kind}/${f}`, raw: readFileSync(join(dir, f)) });
      }
    }
  }
  return out;
}

/**
 * Fields Postfix's cleanup removes before a milter sees the message (and before delivery):
 * `message_drop_headers`, default `bcc, content-length, resent-bcc, return-path`. The proxy filter
 * receives the message before cleanup and would analyse them: the one real difference between the
 * two paths (a forged Return-Path is evidence to the content filter before the queue, and gone for
 * the milter), so the messages are sent without them.
 */
const DROPPED_BY_CLEANUP = /^(bcc|content-length|resent-bcc|return-path):/i;

/**
 * The message with a Message-ID of its own per path (the mail orchestrator drops a second message
 * with the same Message-ID as a duplicate: each path must be analysed on its own), without the
 * fields Postfix drops before a milter.
 */
function withMessageId(raw: Buffer, id: string): Buffer {
  const text = raw.toString('latin1');
  const end = text.search(/\r?\n\r?\n/);
  const head = end < 0 ? text : text.slice(0, end);
  const lines = head.split(/\r?\n/);
  const kept: string[] = [];
  let dropping = false;
  for (const l of lines) {
    if (/^message-id:/i.test(l) || DROPPED_BY_CLEANUP.test(l)) dropping = true;
    else if (!/^[ \t]/.test(l)) dropping = false;
    if (!dropping) kept.push(l);
  }
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  return Buffer.concat([
    Buffer.from(`Message-ID: <${id}>${eol}${kept.join(eol)}`, 'latin1'),
    raw.subarray(Buffer.byteLength(head, 'latin1')),
  ]);
}

/**
 * The milter's decisions match the content filter's (issue 29): each message goes through a
 * Postfix with the content filter before the queue, a Postfix with the milter and one with the
 * milter analysing inline (its own process's analysis, ADR 013 section 5), all on one Trawl with
 * the same policy; what happens to it is the same (refused, quarantined, prefixed,
 * delivered), with the same verdict and threat level where the copy shows them.
 */
describe.skipIf(!runHere)('milter (remote and inline) and content filter decide alike', () => {
  let trawl: TrawlStack;
  let sink: SmtpSink;
  let proxy: TestPostfix;
  let milterPostfix: TestPostfix;
  let filter: SmtpFilterService;
  let milter: SmtpFilterService;
  /** The milter analysing in its own process (TRAWL_MILTER_ANALYSIS=inline). */
  let inlinePostfix: TestPostfix;
  let inline: Awaited<ReturnType<typeof startInlineMilter>>;

  beforeAll(async () => {
    const [mailPort, httpF, httpM, smtpF, milterPort, httpI, inlinePort] = await ports(7);
    sink = await startSmtpSink();
    trawl = await startTrawlStack({ mailPort, filters: { smtp: httpF, 'smtp-milter': httpM } });
    proxy = await startTestPostfix({
      mode: 'before-queue',
      filterPort: smtpF,
      sinkPort: sink.port,
    });
    milterPostfix = await startTestPostfix({ mode: 'milter', milterPort, sinkPort: sink.port });
    const settings = {
      mailPort,
      deadline_ms: 20_000,
      policy: POLICY,
      unanalyzed_action: 'reject' as const,
      quarantine_address: QUARANTINE,
    };
    filter = await startFilter(
      { ...settings, mode: 'before-queue', return_port: proxy.returnPort },
      { smtpPort: smtpF, httpPort: httpF },
    );
    milter = await startMilterFilter(settings, { milterPort, httpPort: httpM }, 'smtp-milter');
    inlinePostfix = await startTestPostfix({
      mode: 'milter',
      milterPort: inlinePort,
      sinkPort: sink.port,
    });
    const { mailPort: _unused, ...smtp } = settings;
    inline = await startInlineMilter({
      smtp: { ...smtp, mail_orchestrator_url: 'http://127.0.0.1:9' },
      milterPort: inlinePort,
      httpPort: httpI,
      analysis: trawl.analysisPorts,
      retriever: 'smtp-inline',
    });
  }, 120_000);

  afterAll(async () => {
    await stopAll(filter, milter, inline, proxy, milterPostfix, inlinePostfix, trawl, sink);
  });

  /** Sends `raw` to `pf` (retrying a 4xx twice, as an MTA does) and reads what became of it. */
  async function outcome(pf: TestPostfix, raw: Buffer, id: string): Promise<Seen> {
    let err: { responseCode?: number } | undefined;
    for (let attempt = 0; attempt < 3; attempt++) {
      const t = client(pf.port);
      err = await t.sendMail({ envelope: ENVELOPE, raw }).then(
        () => undefined,
        (e: { responseCode?: number }) => e,
      );
      t.close();
      if (err?.responseCode === undefined || err.responseCode >= 500) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    if (err?.responseCode === 550) return { action: 'reject' };
    if (err) return { action: err.responseCode && err.responseCode < 500 ? 'tempfail' : 'other' };
    const arrived = () => sink.messages.find((m) => m.header('message-id') === `<${id}>`);
    const heldInPostfix = () => {
      const log = pf.log();
      const qid = new RegExp(`(\\w+): message-id=<${id.replace(/[.]/g, '\\.')}>`).exec(log)?.[1];
      return qid !== undefined && log.includes(`${qid}: milter-hold:`);
    };
    await expect
      .poll(() => arrived() !== undefined || heldInPostfix(), { timeout: 30_000, interval: 50 })
      .toBe(true);
    const m = arrived();
    if (!m) return { action: 'quarantine' };
    const seen = { verdict: m.header('x-trawl-verdict'), threat: m.header('x-trawl-threat-level') };
    if (m.to.includes(QUARANTINE)) return { action: 'quarantine' };
    if ((m.header('subject') ?? '').startsWith(PREFIX)) return { action: 'prefix', ...seen };
    return { action: 'deliver', ...seen };
  }

  it('gives every message the same outcome through the milter as through the content filter', async () => {
    const all = messages();
    const rows: { name: string; filter: Seen; milter: Seen; inline: Seen }[] = [];
    for (const [i, m] of all.entries()) {
      const f = await outcome(
        proxy,
        withMessageId(m.raw, `f${i}@match.trawl.test`),
        `f${i}@match.trawl.test`,
      );
      const k = await outcome(
        milterPostfix,
        withMessageId(m.raw, `m${i}@match.trawl.test`),
        `m${i}@match.trawl.test`,
      );
      const n = await outcome(
        inlinePostfix,
        withMessageId(m.raw, `i${i}@match.trawl.test`),
        `i${i}@match.trawl.test`,
      );
      rows.push({ name: m.name, filter: f, milter: k, inline: n });
    }
    // every action the messages reach is compared, and the set reaches more than one
    expect(new Set(rows.map((r) => r.filter.action)).size).toBeGreaterThan(1);
    expect(rows.filter((r) => r.filter.action === 'tempfail')).toEqual([]);
    expect(rows.map((r) => ({ name: r.name, ...r.milter }))).toEqual(
      rows.map((r) => ({ name: r.name, ...r.filter })),
    );
    // verdict first, record after (ADR 013 section 5): the same decisions as the push path
    expect(rows.map((r) => ({ name: r.name, ...r.inline }))).toEqual(
      rows.map((r) => ({ name: r.name, ...r.filter })),
    );
  }, 300_000);
});

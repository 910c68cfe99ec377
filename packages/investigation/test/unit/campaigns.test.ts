import type { AnalysisResult, Email } from '@trawl/contracts';
import {
  type CampaignAssignment,
  type CampaignRepository,
  type LureInput,
  MIN_TEXT_SIMILARITY,
  signatureSimilarity,
} from '@trawl/platform';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { sampleEmail as email } from '../../../../test/support/sample-email.ts';
import { createCampaignGrouper } from '../../src/campaigns.ts';
import { buildEvidence, lureOf, textSignature } from '../../src/index.ts';

const LURE_TEXT = `Dear Alice,
We detected unusual sign-in activity on your mailbox and have temporarily suspended incoming
messages. To restore full access you must confirm your account details within 24 hours, otherwise
your mailbox will be permanently deactivated and all stored messages will be deleted from our
servers. Click the secure link below to verify your identity and keep your account active.
Thank you for your prompt attention to this matter.
IT Service Desk`;

function message(o: { to: string; text?: string; html?: string; from?: string }): Email {
  return {
    ...email,
    headers: {
      ...email.headers,
      sender: o.from ?? 'helpdesk@lure-sender.example',
      recipients: [o.to],
    },
    ...(o.text !== undefined ? { body_text: o.text } : { body_text: undefined }),
    ...(o.html !== undefined ? { body_html: o.html } : {}),
  } as Email;
}

const lure = (m: Email) => lureOf(m, buildEvidence(m));

describe('campaign lure keys', () => {
  it('keys a phishing domain, not the sender own domain, the recipients domain or big platforms', () => {
    const m = message({
      to: 'alice@corp.example',
      from: 'news@shop.example',
      html: [
        '<a href="https://login.evil-verify.example/a">verify</a>',
        '<a href="https://www.shop.example/offers">shop</a>',
        '<a href="https://intranet.corp.example/">intranet</a>',
        '<a href="https://www.google.com/">google</a>',
        '<a href="https://docs.google.com/forms/d/e/1FAIpQLSfake/viewform">form</a>',
      ].join(' '),
    });
    const keys = lure(m).keys.filter((k) => !k.startsWith('txt'));
    expect(keys).toEqual([
      'dom:evil-verify.example',
      'url:docs.google.com/forms/d/e/1FAIpQLSfake/viewform',
    ]);
  });

  it('keys attachments by sha256 but not inline images', () => {
    const m: Email = {
      ...message({ to: 'a@corp.example', text: 'see attached' }),
      attachments: [
        {
          filename: 'invoice.html',
          content_type: 'text/html',
          content: Buffer.from('<p>pay</p>').toString('base64'),
        },
        {
          filename: 'logo.png',
          content_type: 'image/png',
          content_id: 'logo@x',
          content: Buffer.from('\x89PNG\r\n\x1a\n0000').toString('base64'),
        },
      ],
    } as Email;
    const keys = lure(m).keys;
    expect(keys.filter((k) => k.startsWith('sha:'))).toHaveLength(1);
  });

  it('a near-identical text (another name, another amount, another link) is alike; another text is not', () => {
    const a = textSignature(LURE_TEXT) as string;
    const b = textSignature(
      LURE_TEXT.replace('Dear Alice', 'Dear Robert')
        .replace('24 hours', '48 hours')
        .replace('secure link below', 'secure link https://restore-now.example/r below'),
    ) as string;
    const other =
      textSignature(`Hi team, the quarterly report is attached. Please review the figures
      for the northern region before Thursday's meeting; the budget review moved to Friday
      afternoon and the catering order needs a final head count from each department lead.`) as string;
    expect(a).toMatch(/^[0-9a-f]{256}$/);
    expect(signatureSimilarity(a, b)).toBeGreaterThanOrEqual(MIN_TEXT_SIMILARITY);
    expect(signatureSimilarity(a, other)).toBeLessThan(0.2);
    // the four bands are keys: the variant shares at least one with the original
    const ka = lure(message({ to: 'a@corp.example', text: LURE_TEXT })).keys;
    const kb = lure(
      message({ to: 'b@corp.example', text: LURE_TEXT.replace('Dear Alice', 'Dear Robert') }),
    ).keys;
    expect(ka.filter((k) => k.startsWith('txt') && kb.includes(k)).length).toBeGreaterThan(0);
  });

  it('a short text has no text key (short texts are alike by chance)', () => {
    expect(textSignature('Please find the invoice attached.')).toBeUndefined();
    expect(lure(message({ to: 'a@corp.example', text: 'Call me.' })).signature).toBeUndefined();
  });

  it('reads the text of an HTML-only message', () => {
    const html = `<div><p>${LURE_TEXT.replace(/\n/g, '</p><p>')}</p></div>`;
    const k = lure(message({ to: 'a@corp.example', html }));
    expect(k.signature).toBeDefined();
    expect(
      signatureSimilarity(k.signature as string, textSignature(LURE_TEXT) as string),
    ).toBeGreaterThanOrEqual(MIN_TEXT_SIMILARITY);
  });
});

describe('campaign grouper (the orchestrator background grouping)', () => {
  const log = pino({ level: 'silent' });
  const m = message({
    to: 'alice@corp.example',
    html: '<a href="https://login.evil-verify.example/a">verify</a>',
  });
  const verdict = (phishing: boolean): AnalysisResult => ({
    is_phishing: phishing,
    threat_level: phishing ? 'high' : 'none',
    confidence: 0.9,
    summary: '',
    recommended_action: phishing ? 'quarantine' : 'allow',
    indicators: [],
    evidence: buildEvidence(m),
  });

  /** A store that records its calls; each call waits for `release` when `hold` is set. */
  function fakeStore(o: { failWhen?: (batch: LureInput[]) => boolean } = {}) {
    const calls: string[][] = [];
    let release: (() => void) | undefined;
    const gate = { hold: false };
    const campaigns: CampaignRepository = {
      assign: async () => null,
      async assignMany(inputs) {
        calls.push(inputs.map((i) => i.job_id));
        if (gate.hold) await new Promise<void>((r) => (release = r));
        if (o.failWhen?.(inputs)) throw new Error('boom');
        return inputs.map(
          (i): CampaignAssignment => ({
            campaign: { id: 'c1', size: 2, recipients: 1, reporters: 0 },
            joined: [i.job_id],
            merged: [],
            created: false,
          }),
        );
      },
      forJob: async () => null,
      list: async () => ({ items: [], next_cursor: null }),
      get: async () => null,
    };
    return { campaigns, calls, gate, release: () => release?.() };
  }

  it('groups the jobs that queued while a batch was stored in one call, in their order', async () => {
    const f = fakeStore();
    const g = createCampaignGrouper({ campaigns: f.campaigns }, log, { lingerMs: 0 });
    f.gate.hold = true;
    g.add('j1', m, verdict(true), log);
    for (const id of ['j2', 'j3', 'j4']) g.add(id, m, verdict(true), log);
    expect(g.pending()).toBe(4);
    f.gate.hold = false;
    f.release();
    await g.settled();
    expect(f.calls).toEqual([['j1'], ['j2', 'j3', 'j4']]);
    expect(g.pending()).toBe(0);
  });

  it('waits a short while for a batch to fill: jobs that finish meanwhile share one call', async () => {
    const f = fakeStore();
    const g = createCampaignGrouper({ campaigns: f.campaigns }, log, { lingerMs: 30 });
    g.add('j1', m, verdict(true), log);
    await new Promise((r) => setTimeout(r, 5));
    g.add('j2', m, verdict(true), log);
    expect(f.calls).toEqual([]);
    await g.settled();
    expect(f.calls).toEqual([['j1', 'j2']]);
    // a full batch does not wait
    const full = createCampaignGrouper({ campaigns: f.campaigns }, log, {
      lingerMs: 60_000,
      maxBatch: 2,
    });
    full.add('a', m, verdict(true), log);
    full.add('b', m, verdict(true), log);
    await full.settled();
    expect(f.calls.at(-1)).toEqual(['a', 'b']);
  });

  it('leaves out a clean job that nobody reported before any call; groups a reported one', async () => {
    const f = fakeStore();
    const g = createCampaignGrouper({ campaigns: f.campaigns }, log, { lingerMs: 0 });
    g.add('clean', m, verdict(false), log);
    expect(g.pending()).toBe(0);
    g.add('reported', m, verdict(false), log, true);
    await g.settled();
    expect(f.calls).toEqual([['reported']]);
  });

  it('bounds its batches and its queue', async () => {
    const f = fakeStore();
    const g = createCampaignGrouper({ campaigns: f.campaigns }, log, {
      maxBatch: 2,
      maxQueued: 4,
      lingerMs: 0,
    });
    f.gate.hold = true;
    for (const id of ['a', 'b', 'c', 'd', 'e', 'f']) g.add(id, m, verdict(true), log);
    f.gate.hold = false;
    f.release();
    await g.settled();
    // 'a' is being stored, b..e queue (4 at most), 'f' is dropped
    expect(f.calls).toEqual([['a'], ['b', 'c'], ['d', 'e']]);
  });

  it('a batch that fails is grouped again job by job: one bad job leaves the others grouped', async () => {
    const f = fakeStore({ failWhen: (b) => b.some((i) => i.job_id === 'bad') });
    const g = createCampaignGrouper({ campaigns: f.campaigns }, log, { lingerMs: 0 });
    f.gate.hold = true;
    g.add('first', m, verdict(true), log);
    for (const id of ['x', 'bad', 'y']) g.add(id, m, verdict(true), log);
    f.gate.hold = false;
    f.release();
    await g.settled();
    expect(f.calls).toEqual([['first'], ['x', 'bad', 'y'], ['x'], ['bad'], ['y']]);
  });

  it('drain waits for the queued jobs within the grace period', async () => {
    const f = fakeStore();
    const g = createCampaignGrouper({ campaigns: f.campaigns }, log, { lingerMs: 0 });
    for (const id of ['a', 'b']) g.add(id, m, verdict(true), log);
    await g.drain(5_000);
    expect(g.pending()).toBe(0);
    expect(f.calls.flat()).toEqual(['a', 'b']);
  });
});

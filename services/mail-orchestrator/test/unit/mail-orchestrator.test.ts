import {
  type AnalysisEvent,
  type AnalysisResult,
  deriveCredential,
  topology,
} from '@trawl/contracts';
import { createMemoryBroker, createMemoryCache, declareTopology } from '@trawl/platform';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  buildMailOrchestrator,
  contentHash,
  type MailOrchestrator,
  type MailOrchestratorOptions,
  messageIdOf,
  messageKey,
} from '../../src/index.ts';
import { FakeGateway, FakeRetriever, rawMessage } from './fakes.ts';

const KEY = 'internal-key-for-tests-0123456789';
const silent = pino({ level: 'silent' });

async function waitFor<T>(
  fn: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
) {
  const until = Date.now() + 10_000;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('message keys', () => {
  it('reads a folded Message-ID and ignores the body', () => {
    const raw = Buffer.from(
      'Subject: x\r\nMessage-ID:\r\n  <abc@host>\r\n\r\nMessage-ID: <other@x>\r\n',
    );
    expect(messageIdOf(raw)).toBe('abc@host');
  });
  it('hash the content, with or without a Message-ID', () => {
    const a = messageKey(Buffer.from(rawMessage(1, { messageId: null })));
    const b = messageKey(Buffer.from(rawMessage(2, { messageId: null })));
    expect(a.key).toMatch(/^[0-9a-f]{64}$/);
    expect(a.key).not.toBe(b.key);
    expect(messageKey(Buffer.from(rawMessage(1))).key).toBe(
      messageKey(Buffer.from(rawMessage(1))).key,
    );
  });
  // Regression (issue 15): the key was the Message-ID alone, so a phish reusing the Message-ID of
  // a benign message seen before was dropped as its duplicate and never analysed.
  it('tell apart two messages that share a Message-ID but not their content', () => {
    const benign = rawMessage(1, { body: 'Lunch at noon?' });
    const phish = rawMessage(1, { body: 'Your account is locked: http://login.example.bad/' });
    expect(messageIdOf(Buffer.from(benign))).toBe(messageIdOf(Buffer.from(phish)));
    expect(messageKey(Buffer.from(phish)).key).not.toBe(messageKey(Buffer.from(benign)).key);
  });
});

describe('mail orchestrator', () => {
  let gateway: FakeGateway;
  let retrievers: FakeRetriever[];
  let orch: MailOrchestrator | undefined;
  const t = topology('mo-unit');
  let broker: ReturnType<typeof createMemoryBroker>;

  beforeEach(async () => {
    gateway = await new FakeGateway(KEY).start();
    retrievers = [];
    broker = createMemoryBroker();
    await declareTopology(broker, t);
  });

  afterEach(async () => {
    await orch?.stop(0);
    orch = undefined;
    await gateway.close();
    for (const r of retrievers) await r.close();
    await broker.close();
  });

  async function retriever(): Promise<FakeRetriever> {
    const r = await new FakeRetriever().start();
    retrievers.push(r);
    return r;
  }

  function build(
    entries: Record<string, { r: FakeRetriever; priority?: number; enabled?: boolean }>,
    options: MailOrchestratorOptions = {},
  ): MailOrchestrator {
    orch = buildMailOrchestrator({
      retrievers: Object.fromEntries(
        Object.entries(entries).map(([n, e]) => [
          n,
          { url: e.r.url, priority: e.priority ?? 0, enabled: e.enabled ?? true },
        ]),
      ),
      gateway: { baseUrl: gateway.url },
      internalApiKey: KEY,
      broker,
      topology: t,
      cache: createMemoryCache({ maxEntries: 1000 }),
      logger: silent,
      options: {
        pollIntervalMs: 20,
        retrieverBackoff: { initialMs: 60_000, maxMs: 600_000 },
        verdictBackoff: { initialMs: 5, maxMs: 20 },
        ...options,
      },
    });
    return orch;
  }

  it('polls retrievers by priority, higher first, and skips disabled ones', async () => {
    const low = await retriever();
    const high = await retriever();
    const off = await retriever();
    low.add('l1', rawMessage(1));
    high.add('h1', rawMessage(2));
    off.add('o1', rawMessage(3));
    const o = build({
      low: { r: low, priority: 1 },
      high: { r: high, priority: 10 },
      off: { r: off, enabled: false },
    });
    const report = await o.pollOnce();
    expect(report.polled.map((p) => p.retriever)).toEqual(['high', 'low']);
    expect(gateway.jobs.map((j) => j.origin.retriever).reverse()).toEqual(['high', 'low']);
    expect(off.fetches).toBe(0);
    // each retriever is sent its own credential, never the platform key
    expect(high.keys[0]).toBe(deriveCredential(KEY, { kind: 'retriever', id: 'high' }));
    expect(low.keys[0]).toBe(deriveCredential(KEY, { kind: 'retriever', id: 'low' }));
    expect([...high.keys, ...low.keys]).not.toContain(KEY);
  });

  it('submits each message once, acks it after acceptance, and drops duplicates', async () => {
    const a = await retriever();
    const b = await retriever();
    for (let i = 0; i < 5; i++) a.add(`a${i}`, rawMessage(i));
    a.add('nomid', rawMessage(99, { messageId: null }));
    b.add('b0', rawMessage(0)); // same Message-ID as a0, in another mailbox
    const o = build({ a: { r: a }, b: { r: b } });
    await o.pollOnce();
    expect(gateway.jobs).toHaveLength(6);
    expect(a.acked.sort()).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'nomid']);
    expect(b.acked).toEqual(['b0']);
    // delivered again (at least once): acked as duplicates, not analysed again
    a.add('a1-again', rawMessage(1));
    a.add('nomid-again', rawMessage(99, { messageId: null }));
    await o.pollOnce();
    expect(gateway.jobs).toHaveLength(6);
    expect(a.acked).toContain('a1-again');
    expect(a.acked).toContain('nomid-again');
    const metrics = await o.registry.metrics();
    expect(metrics).toMatch(/trawl_mail_duplicates_total\{retriever="a"\} 2/);
    expect(metrics).toMatch(/trawl_mail_duplicates_total\{retriever="b"\} 1/);
    expect(metrics).toMatch(/trawl_mail_submitted_total\{retriever="a"\} 6/);
    expect(metrics).toMatch(/trawl_mail_fetched_total\{retriever="a"\} 8/);
  });

  it('does not ack while the gateway is unavailable, and submits once it is back', async () => {
    const a = await retriever();
    a.add('m1', rawMessage(1));
    const o = build({ a: { r: a } });
    gateway.unavailable = true;
    const first = await o.pollOnce();
    expect(first.polled[0]?.outcomes).toEqual(['failed']);
    expect(a.acked).toEqual([]);
    gateway.unavailable = false;
    await o.pollOnce();
    expect(gateway.jobs).toHaveLength(1);
    expect(a.acked).toEqual(['m1']);
    expect(await o.registry.metrics()).toMatch(
      /trawl_mail_failures_total\{retriever="a",stage="submit"\} 1/,
    );
  });

  it('acks a message the gateway cannot parse with an unanalyzed verdict, and counts it as rejected', async () => {
    const a = await retriever();
    a.add('bad', rawMessage(1, { body: 'UNPARSEABLE' }));
    const o = build({ a: { r: a } }, { pollIntervalMs: 60_000 });
    const r = await o.pollOnce();
    expect(r.polled[0]?.outcomes).toEqual(['rejected']);
    expect(a.acked).toEqual(['bad']);
    a.add('bad-again', rawMessage(1, { body: 'UNPARSEABLE' }));
    await o.pollOnce();
    expect(gateway.submissions).toBe(1);
    expect(await o.registry.metrics()).toMatch(/trawl_mail_rejected_total\{retriever="a"\} 1/);
    await o.start();
    await waitFor(() => a.verdicts.length === 1, 'the unanalyzed verdict');
    expect(a.verdicts[0]).toMatchObject({
      id: 'bad',
      verdict: 'unanalyzed',
      job_id: `unanalyzed:${contentHash(Buffer.from(rawMessage(1, { body: 'UNPARSEABLE' })))}`,
      error: { code: 'TRAWL_ERR_MAIL_UNPARSEABLE' },
      result: { recommended_action: 'review', threat_level: 'medium' },
    });
    await waitFor(
      async () =>
        /trawl_mail_verdicts_total\{retriever="a",action="unanalyzed"\} 1/.test(
          await o.registry.metrics(),
        ),
      'the verdict counted',
    );
  });

  it('gives an empty message an unanalyzed verdict too', async () => {
    const a = await retriever();
    a.add('empty', '');
    const o = build({ a: { r: a } }, { pollIntervalMs: 60_000 });
    await o.start();
    await waitFor(() => a.verdicts.length === 1 && a.acked.length === 1, 'verdict and ack');
    expect(a.acked).toEqual(['empty']);
    expect(gateway.submissions).toBe(0);
    expect(a.verdicts[0]).toMatchObject({
      id: 'empty',
      verdict: 'unanalyzed',
      error: { code: 'TRAWL_ERR_MAIL_UNANALYZED' },
    });
  });

  it('keeps a refused message in the mailbox while its unanalyzed verdict cannot be queued', async () => {
    const a = await retriever();
    a.add('bad', rawMessage(1, { body: 'UNPARSEABLE' }));
    const o = build({ a: { r: a } }, { pollIntervalMs: 60_000 });
    await broker.dropConnection(60_000); // publishes reject until it reconnects
    const r = await o.pollOnce();
    expect(r.polled[0]?.outcomes).toEqual(['failed']);
    expect(a.acked).toEqual([]);
    expect(await o.registry.metrics()).toMatch(
      /trawl_mail_failures_total\{retriever="a",stage="verdict"\} 1/,
    );
  });

  it('passes the envelope recipient a retriever knows to the gateway', async () => {
    const a = await retriever();
    a.add('bcc', rawMessage(1), { to: ['reports@example.org'] });
    const o = build({ a: { r: a } });
    await o.pollOnce();
    expect(gateway.jobs[0]?.envelopeTo).toBe('reports@example.org');
  });

  // Regression (issue 19): the gateway answered 400 TRAWL_ERR_GATEWAY_UNTRUSTED_HOST to the compose
  // host name and the message was acked unanalysed, its key kept 7 days ("duplicate" on retry).
  it.each([
    ['an untrusted Host', 400, { code: 'TRAWL_ERR_GATEWAY_UNTRUSTED_HOST', detail: 'not trusted' }],
    ['a refused internal key', 401, { code: 'TRAWL_ERR_AUTH_INVALID_TOKEN' }],
    ['a forbidden request', 403, { code: 'TRAWL_ERR_FORBIDDEN' }],
    ['a rate limit', 429, { code: 'TRAWL_ERR_RATE_LIMITED' }],
    ['a server error', 500, { code: 'TRAWL_ERR_INTERNAL' }],
    ['a proxy error without a body', 502, 'Bad Gateway'],
    ['a proxy 400 without a code', 400, '<html>400 Bad Request</html>'],
    ['an unknown route', 404, { code: 'TRAWL_ERR_NOT_FOUND' }],
    ['an unsupported media type', 415, { code: 'TRAWL_ERR_GATEWAY_UNSUPPORTED_MEDIA_TYPE' }],
    [
      'an unknown workflow',
      422,
      { code: 'TRAWL_ERR_VALIDATION', errors: [{ path: '/workflow_id', message: 'unknown' }] },
    ],
  ])(
    'keeps the message and its key when the gateway refuses the request (%s)',
    async (_what, status, body) => {
      const a = await retriever();
      a.add('m1', rawMessage(1));
      const o = build({ a: { r: a } });
      gateway.refusal = { status, body };
      const first = await o.pollOnce();
      expect(first.polled[0]?.outcomes).toEqual(['failed']);
      expect(a.acked).toEqual([]);
      expect(await o.registry.metrics()).not.toMatch(
        /trawl_mail_rejected_total\{retriever="a"\} 1/,
      );
      // Once the configuration is fixed the same message is analysed: no "duplicate" on retry.
      gateway.refusal = undefined;
      const second = await o.pollOnce();
      expect(second.polled[0]?.outcomes).toEqual(['accepted']);
      expect(gateway.jobs).toHaveLength(1);
      expect(a.acked).toEqual(['m1']);
    },
  );

  it.each([
    [
      'unparseable',
      422,
      { code: 'TRAWL_ERR_MAIL_UNPARSEABLE', errors: [{ path: '', message: 'x' }] },
    ],
    [
      'invalid',
      422,
      { code: 'TRAWL_ERR_MAIL_INVALID', errors: [{ path: '/headers/sender', message: 'x' }] },
    ],
    ['too large for the parser', 413, { code: 'TRAWL_ERR_MAIL_TOO_LARGE' }],
    ['larger than the body limit', 413, { code: 'TRAWL_ERR_PAYLOAD_TOO_LARGE' }],
    ['too large for a proxy', 413, '<html>413 Request Entity Too Large</html>'],
    [
      'not an RFC 822 message',
      422,
      { code: 'TRAWL_ERR_VALIDATION', errors: [{ path: '', message: 'must be RFC 822' }] },
    ],
    [
      'a parse that timed out',
      422,
      {
        code: 'TRAWL_ERR_MAIL_UNPARSEABLE',
        detail: 'message could not be parsed within 10000 ms',
        errors: [{ path: '', message: 'message could not be parsed within 10000 ms' }],
      },
    ],
    [
      'over 500 parts',
      422,
      {
        code: 'TRAWL_ERR_MAIL_UNPARSEABLE',
        detail: 'message is not readable MIME: more than 500 MIME parts',
        errors: [{ path: '', message: 'more than 500 MIME parts' }],
      },
    ],
  ])(
    'acks a message the gateway refuses for what it is (%s), with an unanalyzed verdict',
    async (_what, status, body) => {
      const a = await retriever();
      a.add('m1', rawMessage(1));
      const o = build({ a: { r: a } }, { pollIntervalMs: 60_000 });
      gateway.refusal = { status, body };
      const r = await o.pollOnce();
      expect(r.polled[0]?.outcomes).toEqual(['rejected']);
      expect(a.acked).toEqual(['m1']);
      await o.start();
      await waitFor(() => a.verdicts.length === 1, 'the unanalyzed verdict');
      const code = typeof body === 'object' ? body.code : 'TRAWL_ERR_MAIL_UNANALYZED';
      expect(a.verdicts[0]).toMatchObject({
        id: 'm1',
        verdict: 'unanalyzed',
        error: { code },
        result: { recommended_action: 'review' },
      });
      expect(a.verdicts[0]?.error?.message).toContain(`(${status})`);
    },
  );

  it('backs off a failing retriever without stalling the others', async () => {
    const bad = await retriever();
    const good = await retriever();
    bad.failFetch = 100;
    const o = build({ bad: { r: bad, priority: 5 }, good: { r: good } });
    for (let i = 0; i < 3; i++) {
      good.add(`g${i}`, rawMessage(i));
      await o.pollOnce();
    }
    expect(bad.fetches).toBe(1); // backing off for a minute after its failure
    expect(good.acked).toEqual(['g0', 'g1', 'g2']);
    const health = await o.app.inject({ url: '/health' });
    expect(health.json().retrievers[0]).toMatchObject({
      name: 'bad',
      failures: 1,
      backing_off: true,
    });
  });

  it('retries a failing retriever with growing delays while the loop runs', async () => {
    const bad = await retriever();
    const good = await retriever();
    bad.failFetch = 3;
    bad.add('b1', rawMessage(1));
    good.add('g1', rawMessage(2));
    const o = build(
      { bad: { r: bad, priority: 5 }, good: { r: good } },
      { retrieverBackoff: { initialMs: 10, maxMs: 40 } },
    );
    await o.start();
    await waitFor(() => bad.acked.includes('b1'), 'the failing retriever to recover');
    expect(good.acked).toEqual(['g1']);
    expect(bad.fetches).toBeGreaterThanOrEqual(4);
  });

  it('sends verdicts to the retriever a job came from, retrying a failing callback', async () => {
    const a = await retriever();
    a.add('m1', rawMessage(1));
    a.add('m2', rawMessage(2));
    const o = build({ a: { r: a } }, { pollIntervalMs: 60_000 });
    await o.pollOnce();
    await o.start();
    const [j2, j1] = gateway.jobs;
    a.failVerdict = 2;
    const result: AnalysisResult = {
      is_phishing: true,
      threat_level: 'high',
      confidence: 0.8,
      summary: 'phishing',
      recommended_action: 'quarantine',
      indicators: [],
    };
    const completed: AnalysisEvent = {
      event: 'analysis.completed',
      job_id: j1!.job_id,
      email_id: j1!.email_id,
      workflow: 'default',
      result,
      at: new Date().toISOString(),
    };
    const failed: AnalysisEvent = {
      event: 'analysis.failed',
      job_id: j2!.job_id,
      email_id: j2!.email_id,
      workflow: 'default',
      error: { code: 'TRAWL_ERR_DEADLINE', message: 'too slow' },
      at: new Date().toISOString(),
    };
    const foreign = { ...completed, job_id: '00000000-0000-4000-8000-000000000000' };
    await broker.publish(t.exchanges.results, 'analysis.completed', foreign);
    await broker.publish(t.exchanges.results, 'analysis.completed', completed);
    await broker.publish(t.exchanges.results, 'analysis.failed', failed);
    await waitFor(() => a.verdicts.length === 2, 'two verdicts');
    const byJob = new Map(a.verdicts.map((v) => [v.job_id, v]));
    expect(byJob.get(j1!.job_id)).toMatchObject({ id: 'm1', result });
    expect(byJob.get(j1!.job_id)?.verdict).toBe('analyzed');
    // a failed analysis is a message Trawl could not analyse: held, not filed with clean mail
    expect(byJob.get(j2!.job_id)).toMatchObject({
      id: 'm2',
      verdict: 'unanalyzed',
      result: { recommended_action: 'review' },
      error: { code: 'TRAWL_ERR_DEADLINE' },
    });
    await waitFor(
      async () => (await broker.queueDepth(t.queues.mailVerdicts)) === 0,
      'queue drained',
    );
  });

  it('recovers a claim left by a crash: finds the job the gateway made, does not resubmit', async () => {
    const a = await retriever();
    a.add('m1', rawMessage(1));
    const cache = createMemoryCache({ maxEntries: 100 });
    let now = Date.parse('2024-05-01T10:00:00Z');
    const mk = () =>
      buildMailOrchestrator({
        retrievers: { a: { url: a.url, priority: 0, enabled: true } },
        gateway: { baseUrl: gateway.url },
        internalApiKey: KEY,
        broker,
        topology: t,
        cache,
        logger: silent,
        clock: () => new Date(now),
        options: { pendingStaleMs: 1000 },
      });
    // A first replica claimed the message and the gateway made the job, then the replica died.
    const { key } = messageKey(Buffer.from(rawMessage(1)));
    await cache.set(
      `mail:seen:${key}`,
      JSON.stringify({ s: 'pending', at: now, by: 'dead' }),
      3600,
    );
    gateway.jobs.unshift({
      job_id: '11111111-1111-4111-8111-111111111111',
      email_id: (await import('@trawl/mail')).emailId(
        await (await import('@trawl/mail')).parseRawEmail(Buffer.from(rawMessage(1))),
      ),
      status: 'queued',
      workflow: 'default',
      created_at: new Date().toISOString(),
      raw: rawMessage(1),
      origin: {},
    });
    const o = mk();
    const fresh = await o.pollOnce();
    expect(fresh.polled[0]?.outcomes).toEqual(['busy']); // the claim is not stale yet
    expect(a.acked).toEqual([]);
    now += 5000;
    const later = await o.pollOnce();
    expect(later.polled[0]?.outcomes).toEqual(['accepted']);
    expect(gateway.submissions).toBe(0);
    expect(a.acked).toEqual(['m1']);
  });

  it("accepts pushed mail on /internal/ingest with the retriever's own credential only", async () => {
    const a = await retriever();
    const o = build({ a: { r: a } });
    const payload = {
      retriever: 'a',
      messages: [{ id: 'p1', raw: Buffer.from(rawMessage(7)).toString('base64') }],
    };
    const denied = await o.app.inject({ method: 'POST', url: '/internal/ingest', payload });
    expect(denied.statusCode).toBe(401);
    // the platform key is not a retriever's credential
    const platform = await o.app.inject({
      method: 'POST',
      url: '/internal/ingest',
      headers: { 'x-internal-api-key': KEY },
      payload,
    });
    expect(platform.statusCode).toBe(401);
    // retriever b cannot push as retriever a
    const asOther = await o.app.inject({
      method: 'POST',
      url: '/internal/ingest',
      headers: { 'x-internal-api-key': deriveCredential(KEY, { kind: 'retriever', id: 'b' }) },
      payload,
    });
    expect(asOther.statusCode).toBe(403);
    expect(asOther.json().code).toBe('TRAWL_ERR_MAIL_FORBIDDEN');
    expect(gateway.submissions).toBe(0);
    const A = { 'x-internal-api-key': deriveCredential(KEY, { kind: 'retriever', id: 'a' }) };
    const ok = await o.app.inject({
      method: 'POST',
      url: '/internal/ingest',
      headers: A,
      payload,
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().results[0]).toMatchObject({ id: 'p1', status: 'accepted' });
    const again = await o.app.inject({
      method: 'POST',
      url: '/internal/ingest',
      headers: A,
      payload,
    });
    expect(again.json().results[0]).toMatchObject({ status: 'duplicate' });
    const bad = await o.app.inject({
      method: 'POST',
      url: '/internal/ingest',
      headers: A,
      payload: { messages: [] },
    });
    expect(bad.statusCode).toBe(422);
    gateway.unavailable = true;
    const down = await o.app.inject({
      method: 'POST',
      url: '/internal/ingest',
      headers: A,
      payload: { messages: [{ id: 'p2', raw: Buffer.from(rawMessage(8)).toString('base64') }] },
    });
    expect(down.statusCode).toBe(503);
    // the pushed message's origin is the credential's retriever
    expect(gateway.jobs.map((j) => j.origin.retriever)).toEqual(['a']);
    const m = await o.app.inject({ url: '/metrics' });
    expect(m.body).toContain('trawl_mail_fetched_total');
  });
});

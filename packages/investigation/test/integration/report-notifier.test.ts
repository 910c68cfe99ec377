import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { findRepoRoot } from '@trawl/config';
import type { AnalysisEvent, AnalysisResult, Email, JobReport, Topology } from '@trawl/contracts';
import { parseRawEmail } from '@trawl/mail';
import type { Broker, SqlClient, Store } from '@trawl/platform';
import { memoryPlatform, testBroker, testSchema } from '@trawl/platform/testing';
import nodemailer from 'nodemailer';
import { pino } from 'pino';
import { SMTPServer } from 'smtp-server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createReportNotifier, loadTemplate, type ReportNotifier } from '../../src/index.ts';

const silent = pino({ level: 'silent' });
const REPORTER = 'ann.reporter@corp.example';

interface Received {
  from: string;
  to: string[];
  data: string;
}

/** A real SMTP server on a free port of 127.0.0.1; `refuse` makes it answer 451 to RCPT TO. */
async function startSmtp() {
  const received: Received[] = [];
  const state = { refuse: 0 };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(_address, _session, cb) {
      if (state.refuse > 0) {
        state.refuse--;
        const err = Object.assign(new Error('try again later'), { responseCode: 451 });
        cb(err);
        return;
      }
      cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          data: Buffer.concat(chunks).toString('utf8'),
        });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as { port: number }).port;
  return {
    received,
    state,
    url: `smtp://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const email: Email = {
  headers: {
    subject: 'Your mailbox is full',
    sender: 'helpdesk@mailbox-quota.example',
    recipients: [REPORTER],
    date: '2026-11-02T09:00:00.000Z',
  },
  body_text: 'Sign in at http://mailbox-quota.example/login',
  analysis_context: {},
};

const result: AnalysisResult = {
  is_phishing: true,
  confidence: 0.93,
  threat_level: 'critical',
  recommended_action: 'quarantine',
  summary: 'phishing',
  indicators: [],
};

async function reportedJob(store: Store, report: Partial<JobReport> = {}): Promise<string> {
  const jobId = randomUUID();
  await store.jobs.create({
    job_id: jobId,
    email_id: `e-${jobId}`,
    workflow_id: 'default',
    email,
    origin: {
      report: {
        reporter: REPORTER,
        reported_at: '2026-11-02T10:00:00.000Z',
        wrapper_subject: 'FW: Your mailbox is full',
        found: 'rfc822',
        ...report,
      },
    },
  });
  const finished = await store.jobs.finish({
    job_id: jobId,
    outcome: {
      status: 'completed',
      result,
      trace: { workflow_id: 'default', duration_ms: 1, stages: [] },
    },
  });
  expect(finished).not.toBeNull();
  return jobId;
}

function completed(jobId: string): AnalysisEvent {
  return {
    event: 'analysis.completed',
    job_id: jobId,
    email_id: `e-${jobId}`,
    workflow: 'default',
    result,
    at: new Date().toISOString(),
  };
}

async function waitFor<T>(f: () => T | undefined, what: string, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = f();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function waitUntilSent(sql: SqlClient, jobId: string): Promise<void> {
  const until = Date.now() + 20_000;
  for (;;) {
    const { rows } = await sql.query<{ state: string }>(
      'SELECT state FROM report_notifications WHERE job_id = $1',
      [jobId],
    );
    if (rows[0]?.state === 'sent') return;
    if (Date.now() > until) throw new Error(`notification of ${jobId}: ${rows[0]?.state}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const template = loadTemplate(
  join(findRepoRoot(), 'config', 'defaults', 'templates', 'report-verdict.txt'),
);

function notifierOn(
  p: { broker: Broker; topology: Topology; sql: SqlClient },
  smtpUrl: string,
): ReportNotifier {
  return createReportNotifier({
    broker: p.broker,
    topology: p.topology,
    sql: p.sql,
    transport: nodemailer.createTransport(smtpUrl),
    from: 'Trawl <trawl@corp.example>',
    template,
    logger: silent,
    // one event at a time: events are handled in the order they were published
    options: { retryDelayMs: 20, staleMs: 10_000, prefetch: 1 },
  });
}

describe('reporter notifications (PostgreSQL, RabbitMQ, a real SMTP server)', () => {
  let db: Awaited<ReturnType<typeof testSchema>>;
  let tb: Awaited<ReturnType<typeof testBroker>>;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  const running: ReportNotifier[] = [];

  beforeAll(async () => {
    db = await testSchema();
    tb = await testBroker();
    smtp = await startSmtp();
  });
  afterEach(async () => {
    for (const n of running.splice(0)) await n.stop();
  });
  afterAll(async () => {
    await smtp?.close();
    await tb?.cleanup();
    await db?.drop();
  });

  const platform = () => ({ broker: tb.broker, topology: tb.topology, sql: db.store.sql });

  it('answers the reporter once, from the template, and never again after a redelivery or a restart', async () => {
    const n = notifierOn(platform(), smtp.url);
    running.push(n);
    await n.start();
    const jobId = await reportedJob(db.store);
    const before = smtp.received.length;
    await tb.broker.publish(tb.topology.exchanges.results, 'analysis.completed', completed(jobId));
    const mail = await waitFor(
      () => smtp.received.slice(before).find((m) => m.data.includes(jobId)),
      'the notification',
    );
    expect(mail.to).toEqual([REPORTER]);
    expect(mail.from).toBe('trawl@corp.example');
    const parsed = await parseRawEmail(mail.data);
    expect(parsed.headers.subject).toBe('Re: FW: Your mailbox is full — phishing');
    expect(parsed.body_text).toContain('the message "Your mailbox is full"');
    expect(parsed.body_text).toContain('phishing (93% confident, threat level critical)');
    expect(parsed.body_text).toContain('quarantined');
    expect(parsed.headers.raw_headers?.['auto-submitted']).toBe('auto-replied');
    expect(parsed.headers.raw_headers?.['message-id']).toBe(`<report-${jobId}@trawl.invalid>`);
    // recorded right after the relay took it
    await waitUntilSent(db.store.sql, jobId);

    // the same event again (at-least-once delivery), then a new notifier process (a restart)
    await tb.broker.publish(tb.topology.exchanges.results, 'analysis.completed', completed(jobId));
    await n.stop();
    running.length = 0;
    const again = notifierOn(platform(), smtp.url);
    running.push(again);
    await again.start();
    await tb.broker.publish(tb.topology.exchanges.results, 'analysis.completed', completed(jobId));
    // a later report's notification proves both events above were handled before it
    const later = await reportedJob(db.store);
    await tb.broker.publish(tb.topology.exchanges.results, 'analysis.completed', completed(later));
    await waitFor(
      () => smtp.received.find((m) => m.data.includes(later)),
      'the later notification',
    );
    expect(await again.notify(jobId)).toBe('already-sent');
    expect(smtp.received.filter((m) => m.data.includes(jobId))).toHaveLength(1);
  });

  it('retries through a relay that refuses, and sends once it takes the message', async () => {
    const n = notifierOn(platform(), smtp.url);
    running.push(n);
    await n.start();
    smtp.state.refuse = 2;
    const jobId = await reportedJob(db.store);
    await tb.broker.publish(tb.topology.exchanges.results, 'analysis.completed', completed(jobId));
    await waitFor(() => smtp.received.find((m) => m.data.includes(jobId)), 'the notification');
    await waitUntilSent(db.store.sql, jobId);
    const { rows } = await db.store.sql.query<{ state: string; attempts: number }>(
      'SELECT state, attempts FROM report_notifications WHERE job_id = $1',
      [jobId],
    );
    expect(rows).toEqual([{ state: 'sent', attempts: 3 }]);
    expect(smtp.received.filter((m) => m.data.includes(jobId))).toHaveLength(1);
  });

  it('takes over a claim left by a process that died between claiming and recording', async () => {
    const jobId = await reportedJob(db.store);
    await db.store.sql.query(
      `INSERT INTO report_notifications (job_id, reporter, state, message_id, claimed_at)
       VALUES ($1, $2, 'sending', 'x', now() - interval '1 hour')`,
      [jobId, REPORTER],
    );
    const n = notifierOn(platform(), smtp.url);
    expect(await n.notify(jobId)).toBe('sent');
    expect(smtp.received.filter((m) => m.data.includes(jobId))).toHaveLength(1);
  });

  it('leaves jobs that are not reports alone', async () => {
    const jobId = randomUUID();
    await db.store.jobs.create({ job_id: jobId, email_id: 'x', workflow_id: 'default', email });
    const n = notifierOn(platform(), smtp.url);
    expect(await n.notify(jobId)).toBe('not-a-report');
  });
});

describe('reporter notifications on PGlite and the in-process broker (embedded mode)', () => {
  it('sends the notification once', async () => {
    const p = await memoryPlatform();
    const smtp = await startSmtp();
    try {
      const n = notifierOn(p, smtp.url);
      await n.start();
      const jobId = await reportedJob(p.store);
      await p.broker.publish(p.topology.exchanges.results, 'analysis.completed', completed(jobId));
      await p.broker.publish(p.topology.exchanges.results, 'analysis.completed', completed(jobId));
      await waitFor(() => smtp.received.find((m) => m.data.includes(jobId)), 'the notification');
      await waitUntilSent(p.sql, jobId);
      expect(await n.notify(jobId)).toBe('already-sent');
      expect(smtp.received.filter((m) => m.data.includes(jobId))).toHaveLength(1);
      await n.stop();
    } finally {
      await smtp.close();
      await p.close();
    }
  });
});

import { readFileSync } from 'node:fs';
import {
  AnalysisEvent,
  AnalysisResult,
  errorText,
  JobReport,
  type Topology,
} from '@trawl/contracts';
import {
  type Broker,
  boundedSmtp,
  type Consumer,
  type Delivery,
  EVIDENCE_OF,
  type SqlClient,
} from '@trawl/platform';
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import { z } from 'zod';
import { NOTIFY_ERROR_CODES } from './errors.ts';

/**
 * Reporter notifications (issue 17): when a reported message (reported-mail triage, issue 16:
 * `jobs.origin.report`) gets its verdict, the reporter is answered by email through the configured
 * SMTP relay, from a template an admin can change. Sent once per report: the `report_notifications`
 * row (migration 009) is claimed before sending and marked `sent` after; the verdict event stays
 * unacked on its own durable queue until then, so a restart neither loses nor repeats it (a process
 * that dies between sending and recording sends it once more, with the same Message-ID).
 */

/** What the notifier needs of a mail transport: nodemailer's `sendMail`. */
export interface MailTransport {
  sendMail(message: {
    from: string;
    to: string;
    subject: string;
    text: string;
    messageId: string;
    headers: Record<string, string>;
  }): Promise<unknown>;
}

class NotifyTemplateError extends Error {
  readonly code = NOTIFY_ERROR_CODES.template;
}

export interface ReportTemplate {
  subject: string;
  body: string;
}

/** The placeholders a template may use (`{{name}}`); an unknown one is a start-up error. */
const TEMPLATE_PLACEHOLDERS = [
  'subject',
  'sender',
  'wrapper_subject',
  'reporter',
  'reported_at',
  'verdict',
  'action',
  'action_text',
  'threat_level',
  'confidence',
  'job_id',
] as const;
type Placeholder = (typeof TEMPLATE_PLACEHOLDERS)[number];

/** The placeholders of a text, by a scan for `{{` … `}}` (no regex over the template). */
function placeholdersOf(text: string): string[] {
  const out: string[] = [];
  for (let i = text.indexOf('{{'); i >= 0; i = text.indexOf('{{', i + 2)) {
    const end = text.indexOf('}}', i + 2);
    if (end < 0) break;
    out.push(text.slice(i + 2, end).trim());
  }
  return out;
}

/**
 * A template: a first line `Subject: …`, a blank line, then the body (plain text). Throws
 * NotifyTemplateError naming the problem.
 */
function parseTemplate(text: string, where = 'template'): ReportTemplate {
  const t = text.replace(/\r\n/g, '\n');
  const nl = t.indexOf('\n');
  const first = nl < 0 ? t : t.slice(0, nl);
  if (!/^subject:/i.test(first)) {
    throw new NotifyTemplateError(`${where}: the first line must be "Subject: ..."`);
  }
  const subject = first.slice(first.indexOf(':') + 1).trim();
  const body = (nl < 0 ? '' : t.slice(nl + 1)).replace(/^\n/, '');
  const unknown = placeholdersOf(t).filter(
    (p) => !(TEMPLATE_PLACEHOLDERS as readonly string[]).includes(p),
  );
  if (unknown.length > 0) {
    throw new NotifyTemplateError(
      `${where}: unknown placeholder(s) ${unknown.map((u) => `{{${u}}}`).join(', ')}; known: ${TEMPLATE_PLACEHOLDERS.join(', ')}`,
    );
  }
  return { subject, body };
}

/** Reads a reporter notification template file (subject and body with placeholders). */
export function loadTemplate(file: string): ReportTemplate {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new NotifyTemplateError(`${file}: ${errorText(err)}`);
  }
  return parseTemplate(text, file);
}

/** Replaces each `{{name}}` by its value (a scan; values are inserted as they are). */
function fill(text: string, values: Record<Placeholder, string>): string {
  let out = '';
  let from = 0;
  for (let i = text.indexOf('{{', from); i >= 0; i = text.indexOf('{{', from)) {
    const end = text.indexOf('}}', i + 2);
    if (end < 0) break;
    const name = text.slice(i + 2, end).trim() as Placeholder;
    out += text.slice(from, i) + (values[name] ?? '');
    from = end + 2;
  }
  return out + text.slice(from);
}

const ACTION_TEXT: Record<string, string> = {
  allow: 'no action is needed; the message looks legitimate.',
  flag: 'the message has been flagged; treat it with care.',
  review: 'a member of the security team will look at it.',
  quarantine: 'the message has been quarantined; do not open its links or attachments.',
};

/** One line, bounded (a header value must not carry a line break). */
function oneLine(s: string, max = 300): string {
  return s.replace(/[\r\n\t]+/g, ' ').slice(0, max);
}

function renderNotification(
  t: ReportTemplate,
  v: {
    report: JobReport;
    result: AnalysisResult;
    subject: string;
    sender: string;
    jobId: string;
  },
): { subject: string; text: string } {
  const values: Record<Placeholder, string> = {
    subject: oneLine(v.subject),
    sender: oneLine(v.sender),
    wrapper_subject: oneLine(v.report.wrapper_subject),
    reporter: v.report.reporter,
    reported_at: v.report.reported_at,
    verdict: v.result.is_phishing ? 'phishing' : 'not phishing',
    action: v.result.recommended_action,
    action_text: ACTION_TEXT[v.result.recommended_action] ?? v.result.recommended_action,
    threat_level: v.result.threat_level,
    confidence: `${Math.round(v.result.confidence * 100)}%`,
    job_id: v.jobId,
  };
  return { subject: oneLine(fill(t.subject, values), 998), text: fill(t.body, values) };
}

interface ReportNotifierOptions {
  /** Events handled at once (default 4). */
  prefetch?: number;
  /**
   * A `sending` claim older than this belongs to a process that died: taken again (120000). Keep it
   * longer than a send can take (the transport's timeouts) plus the record after it.
   */
  staleMs?: number;
  /** Pause before a failed send's event goes back to the queue, times its delivery count (5000). */
  retryDelayMs?: number;
  /** Deliveries of one event before a failing notification is given up (logged) (default 8). */
  maxDeliveries?: number;
  /**
   * On start, reported jobs created this recently that finished without a `sent` notification are
   * notified (default 1 day; 0: no sweep). Covers events the in-process broker of embedded mode
   * lost in a restart, and notifications given up while the relay was down.
   */
  sweepMs?: number;
}

export interface ReportNotifierDeps {
  broker: Broker;
  topology: Topology;
  sql: SqlClient;
  transport: MailTransport;
  /** TRAWL_NOTIFY_FROM. */
  from: string;
  template: ReportTemplate;
  logger: Logger;
  options?: ReportNotifierOptions;
}

type NotifyOutcome = 'sent' | 'already-sent' | 'not-a-report' | 'not-completed' | 'busy';

/** Tells the people who reported a message what Trawl found. */
export interface ReportNotifier {
  /** Declares its queue (bound to trawl.results) and starts consuming verdict events. */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Notifies the reporter of one job now (the handler of each event); throws when sending fails. */
  notify(jobId: string): Promise<NotifyOutcome>;
  /** The start-up sweep (see `sweepMs`): answers how many reporters it notified. */
  sweep(): Promise<number>;
  readonly queue: string;
}

/** The durable queue of the notifier: `<prefix>trawl.results.report-notify`. */
function reportNotifyQueue(t: Topology): string {
  return `${t.exchanges.results}.report-notify`;
}

const JobRow = z.object({
  status: z.string(),
  report: z.unknown(),
  result: z.unknown(),
  subject: z.string().nullable(),
  sender: z.string().nullable(),
});

function jsonOf(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    return undefined;
  }
}

/** Builds the reporter notifier over its store, sender and templates. */
export function createReportNotifier(d: ReportNotifierDeps): ReportNotifier {
  const o = d.options ?? {};
  const staleMs = o.staleMs ?? 120_000;
  const retryDelayMs = o.retryDelayMs ?? 5000;
  const maxDeliveries = o.maxDeliveries ?? 8;
  const queue = reportNotifyQueue(d.topology);
  const log = d.logger.child({ component: 'report-notifier' });
  const fromAddress = (
    d.from.includes('<') ? d.from.slice(d.from.lastIndexOf('<') + 1, -1) : d.from
  ).toLowerCase();
  let consumer: Consumer | undefined;
  let stopped = false;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  async function claim(
    jobId: string,
    reporter: string,
    messageId: string,
  ): Promise<{ claimed: true } | { claimed: false; state: string; ageMs: number }> {
    const r = await d.sql.query<{ attempts: number }>(
      `INSERT INTO report_notifications (job_id, reporter, state, message_id)
       VALUES ($1, $2, 'sending', $3)
       ON CONFLICT (job_id) DO UPDATE SET state = 'sending', claimed_at = now(), error = NULL,
         attempts = report_notifications.attempts + 1
       WHERE report_notifications.state = 'failed'
          OR (report_notifications.state = 'sending'
              AND report_notifications.claimed_at < now() - $4 * interval '1 millisecond')
       RETURNING attempts`,
      [jobId, reporter, messageId, staleMs],
    );
    if (r.rows.length > 0) return { claimed: true };
    const s = await d.sql.query<{ state: string; age_ms: unknown }>(
      `SELECT state, (extract(epoch FROM now() - claimed_at) * 1000)::float8 AS age_ms
         FROM report_notifications WHERE job_id = $1`,
      [jobId],
    );
    const row = s.rows[0];
    return { claimed: false, state: row?.state ?? 'sending', ageMs: Number(row?.age_ms ?? 0) };
  }

  async function notify(jobId: string): Promise<NotifyOutcome> {
    const r = await d.sql.query(
      `SELECT status, origin->'report' AS report, result,
          COALESCE((email::jsonb)->'headers'->>'subject',
            ${EVIDENCE_OF('jobs')}->'message'->>'subject') AS subject,
          (email::jsonb)->'headers'->>'sender' AS sender
        FROM jobs WHERE job_id = $1`,
      [jobId],
    );
    const row = JobRow.safeParse(r.rows[0]);
    if (!row.success) return 'not-a-report';
    const report = JobReport.safeParse(jsonOf(row.data.report));
    if (!report.success) return 'not-a-report';
    if (row.data.status !== 'completed') return 'not-completed';
    const result = AnalysisResult.safeParse(jsonOf(row.data.result));
    if (!result.success) return 'not-completed';
    const reporter = report.data.reporter;
    // never answer ourselves (a loop through the reporting mailbox)
    if (reporter === fromAddress) return 'not-a-report';
    const messageId = `<report-${jobId}@trawl.invalid>`;
    let c = await claim(jobId, reporter, messageId);
    // another process holds a fresh claim (or died holding it): wait until it is stale
    for (let i = 0; !c.claimed && c.state === 'sending' && i < 3 && !stopped; i++) {
      await sleep(Math.max(50, Math.min(staleMs, staleMs - c.ageMs + 50)));
      c = await claim(jobId, reporter, messageId);
    }
    if (!c.claimed) return c.state === 'sent' ? 'already-sent' : 'busy';
    const m = renderNotification(d.template, {
      report: report.data,
      result: result.data,
      subject: row.data.subject ?? '',
      sender: row.data.sender ?? '',
      jobId,
    });
    try {
      await d.transport.sendMail({
        from: d.from,
        to: reporter,
        subject: m.subject,
        text: m.text,
        messageId,
        // RFC 3834: an automatic answer (no vacation replies, no loops)
        headers: { 'Auto-Submitted': 'auto-replied', 'X-Trawl-Job-Id': jobId },
      });
    } catch (err) {
      const detail = errorText(err).slice(0, 500);
      await d.sql
        .query(`UPDATE report_notifications SET state = 'failed', error = $2 WHERE job_id = $1`, [
          jobId,
          detail,
        ])
        .catch(() => undefined);
      throw Object.assign(new Error(`the SMTP relay did not take the notification: ${detail}`), {
        code: NOTIFY_ERROR_CODES.send,
      });
    }
    await d.sql.query(
      `UPDATE report_notifications SET state = 'sent', sent_at = now() WHERE job_id = $1`,
      [jobId],
    );
    log.info({ job_id: jobId, found: report.data.found }, 'reporter notified');
    return 'sent';
  }

  async function handle(delivery: Delivery): Promise<void> {
    const ev = AnalysisEvent.safeParse(delivery.body);
    if (!ev.success || ev.data.event !== 'analysis.completed') {
      await delivery.ack();
      return;
    }
    const jobId = ev.data.job_id;
    try {
      const outcome = await notify(jobId);
      if (outcome === 'busy') {
        await delivery.nack({ requeue: true });
        return;
      }
      await delivery.ack();
    } catch (err) {
      const code = (err as { code?: string }).code ?? NOTIFY_ERROR_CODES.internal;
      if (delivery.deliveryCount >= maxDeliveries) {
        log.error({ job_id: jobId, code, err: errorText(err) }, 'reporter notification given up');
        await delivery.ack();
        return;
      }
      log.warn(
        {
          job_id: jobId,
          code,
          attempt: delivery.deliveryCount,
          err: errorText(err),
        },
        'reporter notification failed; retried',
      );
      await sleep(retryDelayMs * delivery.deliveryCount);
      await delivery.nack({ requeue: true });
    }
  }

  async function sweep(): Promise<number> {
    const sweepMs = o.sweepMs ?? 86_400_000;
    if (sweepMs <= 0) return 0;
    const r = await d.sql.query<{ job_id: string }>(
      `SELECT j.job_id FROM jobs j
        WHERE j.created_at > now() - $1 * interval '1 millisecond'
          AND j.status = 'completed' AND j.origin ? 'report'
          AND NOT EXISTS (SELECT 1 FROM report_notifications n
                           WHERE n.job_id = j.job_id AND n.state = 'sent')
        ORDER BY j.created_at LIMIT 1000`,
      [sweepMs],
    );
    let sent = 0;
    for (const { job_id } of r.rows) {
      if (stopped) break;
      try {
        if ((await notify(job_id)) === 'sent') sent++;
      } catch (err) {
        log.warn({ job_id, err: errorText(err) }, 'sweep: notification failed');
      }
    }
    if (sent > 0) log.info({ sent }, 'sweep: reporters notified');
    return sent;
  }

  return {
    queue,
    notify,
    sweep,
    async start() {
      stopped = false;
      await d.broker.assertQueue(queue, { type: 'quorum', durable: true });
      await d.broker.bindQueue(
        queue,
        d.topology.exchanges.results,
        d.topology.routingKeys.analysisCompleted,
      );
      consumer = await d.broker.consume(queue, handle, { prefetch: o.prefetch ?? 4 });
      // in the background: start-up does not wait for the relay
      void sweep().catch((err: unknown) => log.warn({ err: errorText(err) }, 'sweep failed'));
    },
    async stop() {
      stopped = true;
      await consumer?.cancel();
      consumer = undefined;
    },
  };
}

/** Longest a notification's send may take, connection to the last reply (then it is cut off). */
const SEND_DEADLINE_MS = 60_000;

/**
 * The relay at `smtpUrl` (smtp:// or smtps://, credentials in it), bounded (issue 28): each reply
 * at most 64 KiB and complete within 30 s of its command on a plain connection, and each send,
 * TLS or not, cut off at its deadline (its connection destroyed). One connection per send.
 */
export function notifyTransport(
  smtpUrl: string,
  o: { deadlineMs?: number; replyTimeoutMs?: number } = {},
): MailTransport {
  const deadlineMs = o.deadlineMs ?? SEND_DEADLINE_MS;
  return {
    async sendMail(message) {
      const bounded = boundedSmtp({ replyTimeoutMs: o.replyTimeoutMs ?? 30_000 });
      const transport = nodemailer.createTransport({
        url: smtpUrl,
        connectionTimeout: 15_000,
        greetingTimeout: 15_000,
        socketTimeout: 30_000,
        ...bounded.options,
      });
      const timer = setTimeout(
        () => bounded.destroyAll(new Error(`the send took longer than ${deadlineMs} ms`)),
        deadlineMs,
      );
      try {
        return await transport.sendMail(message);
      } finally {
        clearTimeout(timer);
        transport.close();
        bounded.close();
      }
    },
  };
}

/**
 * The notifier main.ts and embedded mode run, from the configuration (`cfg.notify`): undefined when
 * no SMTP relay is configured. The transport's timeouts bound a send well below the stale time of
 * a claim. Throws NotifyTemplateError when the template cannot be used.
 */
export function reportNotifierFromConfig(
  notify: { smtpUrl?: string | undefined; from?: string | undefined; templateFile: string },
  deps: Pick<ReportNotifierDeps, 'broker' | 'topology' | 'sql' | 'logger'>,
): ReportNotifier | undefined {
  if (!notify.smtpUrl || !notify.from) return undefined;
  const transport = notifyTransport(notify.smtpUrl);
  return createReportNotifier({
    ...deps,
    transport,
    from: notify.from,
    template: loadTemplate(notify.templateFile),
  });
}

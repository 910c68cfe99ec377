import { createHash } from 'node:crypto';
import { EnvelopeAddress, type VerdictRequest } from '@trawl/contracts';
import type { Logger } from 'pino';
import { SMTP_ERRORS } from './errors.ts';
import { editHeaders } from './headers.ts';
import type { IngestClient } from './ingest-client.ts';
import type { InlineAuth, SmtpClient } from './inline-auth.ts';
import type { SmtpMetrics } from './metrics.ts';
import { type Decision, decide, type Knowledge } from './policy.ts';
import type { QuarantineRecorder } from './quarantine-recorder.ts';
import { ReinjectError, type Reinjector } from './reinjector.ts';
import type { SmtpSettings } from './settings.ts';
import type { VerdictBoard } from './verdict-board.ts';

/** What the filter knows of a message's SMTP transaction. */
type Envelope = { from: string; to: string[]; client?: SmtpClient | undefined };

/** A message judged: its id, the bytes analysed, the decision. */
export interface Judged {
  id: string;
  raw: Buffer;
  decision: Decision;
  /** Trawl's own Authentication-Results value, when it verified. */
  authResults: string | undefined;
}

/** The SMTP answer for one message. */
export type Answer =
  | { code: 250; message: string; decision: Decision }
  | { code: 451 | 550 | 554; message: string; decision?: Decision };

export interface FilterDeps {
  settings: SmtpSettings;
  board: VerdictBoard;
  ingest: IngestClient;
  reinjector: Reinjector;
  metrics: SmtpMetrics;
  logger: Logger;
  /** Trawl's own SPF/DKIM/DMARC/ARC check, written before the message is analysed. */
  inlineAuth?: InlineAuth | undefined;
  /** Records quarantined originals at the gateway, for their release (TRAWL_SMTP_GATEWAY_URL). */
  quarantine?: QuarantineRecorder | undefined;
  /**
   * The verdict from Trawl's analysis in this process (TRAWL_MILTER_ANALYSIS=inline, ADR 013
   * section 5) instead of a push to the mail orchestrator.
   */
  analyse?: InlineVerdicts | undefined;
}

/** A verdict found in this process: the message analysed here, answered by the deadline. */
export type InlineVerdicts = (
  m: { id: string; raw: Buffer; to: string[] },
  deadline: AbortSignal,
) => Promise<Knowledge>;

/** The verdict of a message Trawl cannot analyse (it cannot become an Email): no job holds it. */
export function unanalyzedVerdict(id: string, detail: string): VerdictRequest {
  return {
    id,
    job_id: `unanalyzed:${id}`,
    result: {
      is_phishing: false,
      threat_level: 'medium',
      confidence: 0,
      summary: `Trawl could not analyse this message (${detail})`.slice(0, 2000),
      recommended_action: 'review',
      indicators: [],
    },
    verdict: 'unanalyzed',
  };
}

/** The id a message has in Trawl: sha256 of its bytes, the same on every attempt Postfix makes. */
export function messageRef(raw: Buffer): string {
  return createHash('sha256').update(raw).digest('hex');
}

const outcomeLabel = (d: Decision): string => {
  if (d.kind !== 'deliver') return d.kind === 'reject' ? 'rejected' : 'tempfailed';
  if (d.action === 'quarantine') return 'quarantined';
  if (d.action === 'prefix') return 'prefixed';
  return d.headers[0]?.[1] === 'unanalyzed' ? 'unanalyzed_delivered' : 'delivered';
};

/**
 * One message, from the end of DATA to the answer: its verdict (known already, or submitted and
 * waited for until the deadline), the policy's decision, and the re-injection.
 */
export function createFilter(d: FilterDeps) {
  const s = d.settings;

  async function verdictFor(
    id: string,
    raw: Buffer,
    to: string[],
    deadline: AbortSignal,
  ): Promise<Knowledge> {
    const known = d.board.known(id);
    if (known) return { kind: 'verdict', verdict: known };
    if (d.analyse) return d.analyse({ id, raw, to }, deadline);
    // Waiting starts before the submission: the verdict may come back before its answer does.
    // It ends at the deadline, or at once when the submission says no verdict will come.
    const noVerdict = new AbortController();
    const waiting = d.board.wait(id, AbortSignal.any([deadline, noVerdict.signal]));
    const envelopeTo = to.filter((a) => EnvelopeAddress.safeParse(a).success);
    const sub = await d.ingest.submit({ id, raw, to: envelopeTo }, deadline);
    if (sub.kind !== 'accepted') noVerdict.abort();
    switch (sub.kind) {
      case 'accepted': {
        const v = await waiting;
        if (v) return { kind: 'verdict', verdict: v };
        return { kind: 'timeout', reason: 'no verdict within the deadline' };
      }
      case 'rejected':
        // Its `unanalyzed` verdict is queued to us too; no need to wait for it.
        return { kind: 'verdict', verdict: unanalyzedVerdict(id, sub.detail) };
      case 'refused':
        d.metrics.errors.inc({ stage: 'submit' });
        d.logger.error(
          { status: sub.status, code: SMTP_ERRORS.trawlRefused },
          'the mail orchestrator refused the filter (check TRAWL_RETRIEVER_KEY and TRAWL_MAIL_RETRIEVERS)',
        );
        return { kind: 'timeout', reason: 'Trawl refused the filter' };
      default:
        d.metrics.errors.inc({ stage: 'submit' });
        d.logger.warn(
          { reason: sub.reason, code: SMTP_ERRORS.trawlUnavailable },
          'message not submitted',
        );
        return { kind: 'timeout', reason: sub.reason };
    }
  }

  /**
   * The policy's decision for one message (verdict known, or submitted and waited for until the
   * deadline), and the bytes Trawl analysed (with its own Authentication-Results when it
   * verifies): the content filter and the milter share it.
   */
  async function judge(received: Buffer, envelope: Envelope): Promise<Judged> {
    // the id of the bytes Postfix sent: the same on every retry, whatever DNS answers
    const id = messageRef(received);
    let raw = received;
    let authResults: string | undefined;
    if (d.inlineAuth) {
      const a = await d.inlineAuth.check(received, envelope);
      raw = a.raw;
      authResults = a.authResults;
    }
    const deadline = AbortSignal.timeout(s.deadline_ms);
    d.metrics.inFlight.inc();
    try {
      const decision = decide(await verdictFor(id, raw, envelope.to, deadline), s);
      return { id, raw, decision, authResults };
    } finally {
      d.metrics.inFlight.dec();
    }
  }

  /** Records a quarantined original at the gateway; false (logged) when it could not. */
  async function recordQuarantine(
    decision: Decision,
    raw: Buffer,
    envelope: { from: string; to: string[] },
    id: string,
  ): Promise<boolean> {
    if (!d.quarantine) return true;
    try {
      await d.quarantine.record({
        messageRef: id,
        jobId: jobOf(decision),
        from: envelope.from,
        to: envelope.to,
        raw,
      });
      return true;
    } catch (err) {
      d.metrics.errors.inc({ stage: 'quarantine' });
      d.logger.warn(
        { id, err: (err as Error).message, code: SMTP_ERRORS.quarantineRecord },
        'quarantined original not recorded',
      );
      return false;
    }
  }

  return {
    judge,
    recordQuarantine,
    /** Counts a message's outcome (trawl_smtp_messages_total). */
    count(decision: Decision): void {
      d.metrics.messages.inc({ outcome: outcomeLabel(decision) });
    },
    /**
     * Filters one message and answers for all its recipients (Postfix sends one transaction per
     * message and takes the answer for each recipient).
     */
    async handle(received: Buffer, envelope: Envelope): Promise<Answer> {
      const started = process.hrtime.bigint();
      const { id, raw, decision } = await judge(received, envelope);
      const answer = await apply(decision, raw, envelope, id);
      d.metrics.duration.observe(Number(process.hrtime.bigint() - started) / 1e9);
      return answer;
    },
  };

  async function apply(
    decision: Decision,
    raw: Buffer,
    envelope: { from: string; to: string[] },
    id: string,
  ): Promise<Answer> {
    if (decision.kind === 'tempfail') {
      d.metrics.messages.inc({ outcome: 'tempfailed' });
      return { code: 451, message: decision.message, decision };
    }
    if (decision.kind === 'reject') {
      d.metrics.messages.inc({ outcome: 'rejected' });
      d.logger.info({ id, job_id: jobOf(decision) }, 'message refused (550)');
      return { code: 550, message: decision.message, decision };
    }
    if (decision.quarantine && !(await recordQuarantine(decision, raw, envelope, id))) {
      // the original, kept for its release: without the record, no quarantine (Postfix retries)
      return {
        code: 451,
        message: '4.3.0 The message could not be quarantined; try again later',
      };
    }
    const to = decision.quarantine ? [decision.quarantine] : envelope.to;
    const headers: [string, string][] = [...decision.headers];
    if (decision.quarantine) {
      headers.push(['X-Trawl-Original-Recipients', envelope.to.slice(0, 50).join(', ')]);
    }
    const edited = editHeaders(raw, { add: headers, subjectPrefix: decision.subjectPrefix });
    try {
      await d.reinjector.send({ from: envelope.from, to, raw: edited });
    } catch (err) {
      d.metrics.errors.inc({ stage: 'reinject' });
      const code = err instanceof ReinjectError ? err.responseCode : undefined;
      d.logger.warn(
        { id, err: (err as Error).message, code: SMTP_ERRORS.reinject },
        're-injection failed',
      );
      // A permanent refusal downstream stays permanent; anything else is retried by Postfix.
      if (code !== undefined && code >= 500) {
        return { code: 554, message: '5.3.0 The message was refused after filtering' };
      }
      return { code: 451, message: '4.3.0 The message could not be passed on; try again later' };
    }
    d.metrics.messages.inc({ outcome: outcomeLabel(decision) });
    return { code: 250, message: `2.0.0 Ok: filtered (${decision.action})`, decision };
  }
}

function jobOf(d: Decision): string | undefined {
  if (d.kind === 'tempfail') return undefined;
  return d.headers.find(([n]) => n === 'X-Trawl-Job')?.[1];
}

/** The filter `createFilter` builds: judges a message and carries out the decision (content filter). */
export type Filter = ReturnType<typeof createFilter>;

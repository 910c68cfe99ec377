import type { Job, JobError, RetrievedMessage } from '@trawl/contracts';
import { emailId, extractReportedMail, parseRawEmail } from '@trawl/mail';
import type { Logger } from 'pino';
import type { DedupStore } from './dedup-store.ts';
import { GatewayMisconfiguredError, GatewayUnavailableError, MAIL_ERRORS } from './errors.ts';
import type { GatewayClient } from './gateway-client.ts';
import { contentHash, messageKey } from './message-key.ts';
import type { MailMetrics } from './metrics.ts';

/**
 * What became of one message:
 *  - accepted:  the gateway holds a job for it (now, or from an earlier attempt found on recovery);
 *  - duplicate: seen before (the same bytes) and already handled;
 *  - rejected:  the gateway will never take it (unparseable, invalid, too large): an `unanalyzed`
 *               verdict for it is queued before it is acked, so it never passes without one;
 *  - busy:      another attempt is in flight (a replica, or a claim not yet stale): retry later;
 *  - failed:    the gateway is unavailable, or refused the request rather than the message
 *               (untrusted Host, internal key, unknown workflow): retry later, nothing kept.
 * The first three are acked to the retriever; the last two are not (it hands them out again).
 */
export type Outcome =
  | { kind: 'accepted'; jobId: string; recovered?: boolean }
  | { kind: 'duplicate'; jobId?: string }
  | { kind: 'rejected'; detail: string }
  | { kind: 'busy' }
  | { kind: 'failed'; reason: string };

export const ACKED_OUTCOMES: ReadonlySet<Outcome['kind']> = new Set([
  'accepted',
  'duplicate',
  'rejected',
]);

export interface ProcessorDeps {
  gateway: GatewayClient;
  dedup: DedupStore;
  metrics: MailMetrics;
  logger: Logger;
  instanceId: string;
  now: () => number;
  /** A claim older than this is taken for the claim of a dead replica and recovered. */
  pendingStaleMs: number;
  /** Sends the verdict of a job found finished during recovery (its event went by unrouted). */
  onRecoveredJob: (job: Job, origin: { retriever: string; id: string }) => Promise<void>;
  /**
   * Queues the `unanalyzed` verdict of a message the gateway refused (durably: it resolves once the
   * broker confirmed it); the verdict relay delivers it to the retriever. Rejects when it cannot.
   */
  fileUnanalyzed: (retriever: string, id: string, ref: string, error: JobError) => Promise<void>;
  /** True for a reporting mailbox (TRAWL_MAIL_RETRIEVERS `report: true`, issue 16). */
  isReport?: (retriever: string) => boolean;
  /** True once the orchestrator was stopped without grace: write nothing more. */
  killed: () => boolean;
}

const MAX_REASON = 2000;

class Killed extends Error {}

export function createMessageProcessor(d: ProcessorDeps) {
  const alive = () => {
    if (d.killed()) throw new Killed('stopped');
  };

  /**
   * Queues the `unanalyzed` verdict of a refused message. False (logged, counted) when the broker
   * did not take it: the message must then stay unacked and come back.
   */
  async function unanalyzed(
    retriever: string,
    msg: RetrievedMessage,
    raw: Buffer,
    error: JobError,
  ): Promise<boolean> {
    try {
      await d.fileUnanalyzed(retriever, msg.id, contentHash(raw), error);
      return true;
    } catch (err) {
      d.metrics.failures.inc({ retriever, stage: 'verdict' });
      d.logger.warn(
        { retriever, id: msg.id, err: String(err) },
        'unanalyzed verdict not queued; the message is retried',
      );
      return false;
    }
  }

  async function submit(
    retriever: string,
    msg: RetrievedMessage,
    raw: Buffer,
    key: string,
    signal: AbortSignal | undefined,
  ): Promise<Outcome> {
    let outcome: Awaited<ReturnType<GatewayClient['submitRaw']>>;
    try {
      outcome = await d.gateway.submitRaw(
        raw,
        {
          retriever,
          messageId: msg.id,
          envelopeTo: msg.envelope?.to,
          report: d.isReport?.(retriever) ?? false,
        },
        signal,
      );
    } catch (err) {
      alive();
      await d.dedup.release(key).catch(() => undefined);
      d.metrics.failures.inc({ retriever, stage: 'submit' });
      if (err instanceof GatewayMisconfiguredError) {
        // Every message fails the same way until someone fixes the configuration: an error, not a
        // rejection; the message stays in its mailbox and its key is free for the next attempt.
        d.logger.error(
          {
            retriever,
            id: msg.id,
            code: err.code,
            status: err.httpStatus,
            gateway: err.gatewayCode,
          },
          err.message,
        );
        return { kind: 'failed', reason: err.message };
      }
      const reason = err instanceof GatewayUnavailableError ? err.message : String(err);
      d.logger.warn(
        { retriever, id: msg.id, reason },
        'gateway did not accept the message; retried later',
      );
      return { kind: 'failed', reason };
    }
    alive();
    if (outcome.kind === 'rejected') {
      // The sender controls every reason for a refusal (parts, size, headers, parse time): the
      // message is held for a person by its own verdict, never acked without one.
      const error: JobError = {
        code: outcome.code ?? MAIL_ERRORS.unanalyzed,
        message: `the gateway refused the message (${outcome.status}): ${outcome.detail}`.slice(
          0,
          MAX_REASON,
        ),
      };
      if (!(await unanalyzed(retriever, msg, raw, error))) {
        alive();
        await d.dedup.release(key).catch(() => undefined);
        return { kind: 'failed', reason: 'unanalyzed verdict not queued' };
      }
      alive();
      await d.dedup.markRejected(key);
      d.metrics.rejected.inc({ retriever });
      d.logger.warn(
        { retriever, id: msg.id, status: outcome.status, detail: outcome.detail },
        'gateway refused the message for good; acked with an unanalyzed verdict',
      );
      return { kind: 'rejected', detail: outcome.detail };
    }
    await d.dedup.markSubmitted(key, outcome.jobId, { retriever, id: msg.id });
    d.metrics.submitted.inc({ retriever });
    d.logger.info({ retriever, id: msg.id, job_id: outcome.jobId }, 'message submitted');
    return { kind: 'accepted', jobId: outcome.jobId };
  }

  /** A claim whose owner died: find the job it may have created, else submit again. */
  async function recover(
    retriever: string,
    msg: RetrievedMessage,
    raw: Buffer,
    key: string,
    claimedAt: number,
    signal: AbortSignal | undefined,
  ): Promise<Outcome> {
    if (!(await d.dedup.lockRecovery(key, Math.ceil(d.pendingStaleMs / 1000)))) {
      return { kind: 'busy' };
    }
    try {
      let eid: string | undefined;
      try {
        // As the gateway parses it (the envelope recipient too), so that the ids agree.
        const to = msg.envelope?.to;
        const parsed = await parseRawEmail(raw, to ? { envelope: { to } } : {});
        // a report's job holds the original found inside it (issue 16), as the gateway chose it
        eid = emailId(d.isReport?.(retriever) ? (await extractReportedMail(parsed)).email : parsed);
      } catch {
        eid = undefined; // the gateway cannot have made a job of it either
      }
      if (eid !== undefined) {
        let found: Job | undefined;
        try {
          // Clocks of the two hosts may differ: look a little further back than the claim.
          for await (const job of d.gateway.jobsSince(new Date(claimedAt - 5 * 60_000), signal)) {
            if (job.email_id === eid) {
              found = job;
              break;
            }
          }
        } catch (err) {
          alive();
          d.metrics.failures.inc({ retriever, stage: 'submit' });
          return { kind: 'failed', reason: `recovery: ${(err as Error).message}` };
        }
        alive();
        if (found) {
          const origin = { retriever, id: msg.id };
          await d.dedup.markSubmitted(key, found.job_id, origin);
          d.metrics.submitted.inc({ retriever });
          d.logger.info(
            { retriever, id: msg.id, job_id: found.job_id },
            'recovered a submission interrupted before it was recorded',
          );
          if (found.status === 'completed' || found.status === 'failed') {
            await d
              .onRecoveredJob(found, origin)
              .catch((err) =>
                d.logger.warn(
                  { job_id: found.job_id, err: String(err) },
                  'recovered verdict not sent',
                ),
              );
          }
          return { kind: 'accepted', jobId: found.job_id, recovered: true };
        }
      }
      await d.dedup.reclaim(key, d.now(), d.instanceId);
      return await submit(retriever, msg, raw, key, signal);
    } finally {
      if (!d.killed()) await d.dedup.unlockRecovery(key).catch(() => undefined);
    }
  }

  async function process(
    retriever: string,
    msg: RetrievedMessage,
    signal?: AbortSignal,
  ): Promise<Outcome> {
    const raw = Buffer.from(msg.raw, 'base64');
    d.metrics.fetched.inc({ retriever });
    if (raw.length === 0) {
      const error = { code: MAIL_ERRORS.unanalyzed, message: 'the message is empty' };
      if (!(await unanalyzed(retriever, msg, raw, error))) {
        return { kind: 'failed', reason: 'unanalyzed verdict not queued' };
      }
      d.metrics.rejected.inc({ retriever });
      return { kind: 'rejected', detail: 'empty message' };
    }
    const { key } = messageKey(raw);
    try {
      for (let i = 0; i < 2; i++) {
        if (await d.dedup.claim(key, d.now(), d.instanceId)) {
          alive();
          return await submit(retriever, msg, raw, key, signal);
        }
        alive();
        const state = await d.dedup.get(key);
        alive();
        if (state === null) continue; // expired between the two calls: claim again
        if (state.s === 'submitted' || state.s === 'rejected') {
          d.metrics.duplicates.inc({ retriever });
          d.logger.info({ retriever, id: msg.id }, 'duplicate message dropped');
          return state.s === 'submitted'
            ? { kind: 'duplicate', jobId: state.job }
            : { kind: 'duplicate' };
        }
        if (d.now() - state.at < d.pendingStaleMs) return { kind: 'busy' };
        return await recover(retriever, msg, raw, key, state.at, signal);
      }
      return { kind: 'busy' };
    } catch (err) {
      if (err instanceof Killed) return { kind: 'failed', reason: 'stopped' };
      d.metrics.failures.inc({ retriever, stage: 'dedup' });
      d.logger.warn({ retriever, id: msg.id, err: String(err) }, 'dedup store unavailable');
      return { kind: 'failed', reason: 'cache unavailable' };
    }
  }

  return { process };
}

export type MessageProcessor = ReturnType<typeof createMessageProcessor>;

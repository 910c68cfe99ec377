import {
  type AnalysisEvent,
  AnalysisEvent as AnalysisEventSchema,
  type AnalysisResult,
  type BackoffPolicy,
  backoffDelay,
  type Job,
  type JobError,
  MailUnanalyzedEvent,
  type Topology,
  type VerdictRequest,
} from '@trawl/contracts';
import type { Broker, Consumer, Delivery } from '@trawl/platform';
import type { Logger } from 'pino';
import type { DedupStore, JobOrigin } from './dedup-store.ts';
import { RetrieverError } from './errors.ts';
import type { MailMetrics } from './metrics.ts';
import type { RetrieverClient } from './retriever-client.ts';

export interface VerdictOptions {
  /** Callback attempts per delivery of an event. */
  attempts: number;
  backoff: BackoffPolicy;
  /** Deliveries of one event after which it is logged and dropped. */
  maxDeliveries: number;
  prefetch: number;
}

/**
 * What a retriever is told when the analysis failed: an `unanalyzed` verdict (VerdictRequest
 * `verdict`) with a `review` result (a person should look at the message) and the error, so that a
 * failure never silently leaves the message untouched.
 */
export function failedResult(error: JobError | undefined): AnalysisResult {
  const what = error ? `${error.code}: ${error.message}` : 'unknown error';
  return {
    is_phishing: false,
    threat_level: 'none',
    confidence: 0,
    summary: `Trawl could not analyse this message (${what}); review it by hand.`.slice(0, 10_000),
    recommended_action: 'review',
    indicators: [],
  };
}

/**
 * What a retriever is told of a message the gateway refused (unparseable, too large, no recipient,
 * a parse that timed out): the sender controls each of these, so the refusal is itself a reason
 * to look: threat level `medium`, action `review`, `is_phishing` false with confidence 0 (not
 * known). The retriever holds the message (IMAP: the hold folder), never files it as clean.
 */
export function unanalyzedResult(error: JobError): AnalysisResult {
  return {
    is_phishing: false,
    threat_level: 'medium',
    confidence: 0,
    summary:
      `Trawl could not analyse this message (${error.code}: ${error.message}); it is held for review.`.slice(
        0,
        10_000,
      ),
    recommended_action: 'review',
    indicators: [],
  };
}

/** The verdict request for a retriever from a job's result (or its absence). */
export function verdictRequest(
  id: string,
  jobId: string,
  result: AnalysisResult | undefined,
  error: JobError | undefined,
): VerdictRequest {
  return {
    id,
    job_id: jobId,
    result: result ?? failedResult(error),
    ...(result ? {} : error ? { error } : {}),
    verdict: result ? 'analyzed' : 'unanalyzed',
  };
}

/** The verdict of a message the gateway refused (there is no job: `job_id` names the content). */
export function unanalyzedVerdictRequest(ev: MailUnanalyzedEvent): VerdictRequest {
  return {
    id: ev.id,
    job_id: `unanalyzed:${ev.ref}`,
    result: unanalyzedResult(ev.error),
    error: ev.error,
    verdict: 'unanalyzed',
  };
}

/** The label of a verdict in `trawl_mail_verdicts_total{action}`. */
function actionLabel(req: VerdictRequest): string {
  return req.verdict === 'unanalyzed' ? 'unanalyzed' : req.result.recommended_action;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });

/**
 * Consumes `analysis.completed|failed` from the durable queue `trawl.mail.verdicts` and calls the
 * retriever the message came from: `POST <url>/internal/verdict`. The event is acked after the
 * retriever answered 2xx, or dropped (logged, counted) after `maxDeliveries` deliveries.
 */
export function createVerdictRelay(d: {
  broker: Broker;
  topology: Topology;
  retrievers: ReadonlyMap<string, RetrieverClient>;
  dedup: DedupStore;
  metrics: MailMetrics;
  logger: Logger;
  options: VerdictOptions;
}) {
  let consumer: Consumer | undefined;
  const inFlight = new Set<Delivery>();
  let abort = new AbortController();

  async function resolveOrigin(ev: AnalysisEvent): Promise<JobOrigin | null> {
    if (ev.origin && d.retrievers.has(ev.origin.retriever)) {
      return { retriever: ev.origin.retriever, id: ev.origin.message_id };
    }
    return d.dedup.originOf(ev.job_id);
  }

  /** Sends one verdict with retries; true when the retriever answered 2xx. */
  async function send(
    origin: JobOrigin,
    req: VerdictRequest,
    signal: AbortSignal,
  ): Promise<boolean> {
    const client = d.retrievers.get(origin.retriever);
    if (!client) return false;
    for (let attempt = 1; attempt <= d.options.attempts; attempt++) {
      if (signal.aborted) return false;
      try {
        await client.verdict(req, signal);
        d.metrics.verdicts.inc({ retriever: origin.retriever, action: actionLabel(req) });
        d.logger.info(
          {
            retriever: origin.retriever,
            id: req.id,
            job_id: req.job_id,
            action: actionLabel(req),
          },
          'verdict delivered',
        );
        return true;
      } catch (err) {
        d.metrics.failures.inc({ retriever: origin.retriever, stage: 'verdict' });
        if (err instanceof RetrieverError && (err.httpStatus === 404 || err.httpStatus === 422)) {
          // The retriever no longer has the message (or refuses the verdict): retrying cannot help.
          d.logger.warn(
            { retriever: origin.retriever, id: req.id, job_id: req.job_id, status: err.httpStatus },
            'retriever cannot apply the verdict; dropped',
          );
          return true;
        }
        d.logger.warn(
          { retriever: origin.retriever, job_id: req.job_id, attempt, err: (err as Error).message },
          'verdict callback failed',
        );
        if (attempt < d.options.attempts)
          await sleep(backoffDelay(attempt, d.options.backoff), signal);
      }
    }
    return false;
  }

  async function handle(delivery: Delivery): Promise<void> {
    inFlight.add(delivery);
    try {
      let origin: JobOrigin | null;
      let req: VerdictRequest;
      const parsed = AnalysisEventSchema.safeParse(delivery.body);
      if (parsed.success) {
        const ev = parsed.data;
        origin = await resolveOrigin(ev);
        req = verdictRequest(origin?.id ?? '', ev.job_id, ev.result, ev.error);
      } else {
        const refused = MailUnanalyzedEvent.safeParse(delivery.body);
        if (!refused.success) {
          d.logger.warn({ routing_key: delivery.routingKey }, 'not an analysis event; dropped');
          await delivery.ack();
          return;
        }
        origin = { retriever: refused.data.retriever, id: refused.data.id };
        req = unanalyzedVerdictRequest(refused.data);
      }
      if (!origin || !d.retrievers.has(origin.retriever)) {
        await delivery.ack(); // not a message from one of our retrievers
        return;
      }
      const signal = abort.signal;
      const ok = await send(origin, req, signal);
      if (signal.aborted) return; // stopped: left unacked, the broker hands it out again
      if (ok) {
        await delivery.ack();
      } else if (delivery.deliveryCount >= d.options.maxDeliveries) {
        d.logger.error(
          {
            retriever: origin.retriever,
            id: origin.id,
            job_id: req.job_id,
            deliveries: delivery.deliveryCount,
          },
          'verdict could not be delivered; dropped',
        );
        await delivery.ack();
      } else {
        await delivery.nack({ requeue: true });
      }
    } catch (err) {
      d.logger.warn({ err: String(err) }, 'verdict handling failed; requeued');
      if (!abort.signal.aborted) await delivery.nack({ requeue: true }).catch(() => undefined);
    } finally {
      inFlight.delete(delivery);
    }
  }

  let declared: Promise<void> | undefined;
  /** The verdict queue and its bindings, declared once (again after a failure). */
  function declare(): Promise<void> {
    declared ??= (async () => {
      const t = d.topology;
      await d.broker.assertQueue(t.queues.mailVerdicts, { type: 'quorum', durable: true });
      await d.broker.bindQueue(
        t.queues.mailVerdicts,
        t.exchanges.results,
        t.routingKeys.analysisCompleted,
      );
      await d.broker.bindQueue(
        t.queues.mailVerdicts,
        t.exchanges.results,
        t.routingKeys.analysisFailed,
      );
    })().catch((err: unknown) => {
      declared = undefined;
      throw err;
    });
    return declared;
  }

  return {
    async start(): Promise<void> {
      abort = new AbortController();
      const t = d.topology;
      await declare();
      consumer = await d.broker.consume(t.queues.mailVerdicts, handle, {
        prefetch: d.options.prefetch,
      });
    },
    /**
     * Queues the `unanalyzed` verdict of a message the gateway refused, on the verdict queue itself
     * (default exchange: no other subscriber of trawl.results sees a job that does not exist).
     * Resolves once the broker confirmed it. Messages of a retriever this orchestrator does not
     * know (pushed without a configured name) have nobody to tell: nothing is queued.
     */
    async fileUnanalyzed(retriever: string, id: string, ref: string, error: JobError) {
      if (!d.retrievers.has(retriever)) return;
      await declare();
      const ev: MailUnanalyzedEvent = {
        event: 'mail.unanalyzed',
        retriever,
        id,
        ref,
        error,
        at: new Date().toISOString(),
      };
      await d.broker.publish('', d.topology.queues.mailVerdicts, MailUnanalyzedEvent.parse(ev), {
        persistent: true,
      });
    },
    /** Delivers the verdict of a job found already finished on recovery. */
    async deliverJob(job: Job, origin: JobOrigin): Promise<void> {
      await send(
        origin,
        verdictRequest(origin.id, job.job_id, job.result ?? undefined, job.error ?? undefined),
        abort.signal,
      );
    },
    async stop(graceful: boolean): Promise<void> {
      await consumer?.cancel().catch(() => undefined);
      consumer = undefined;
      if (!graceful) {
        abort.abort();
        for (const dl of [...inFlight]) await dl.nack({ requeue: true }).catch(() => undefined);
        inFlight.clear();
        return;
      }
      for (let i = 0; i < 200 && inFlight.size > 0; i++)
        await new Promise((r) => setTimeout(r, 25));
      abort.abort();
    },
  };
}

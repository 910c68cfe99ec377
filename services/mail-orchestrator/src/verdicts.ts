import {
  type AnalysisEvent,
  AnalysisEvent as AnalysisEventSchema,
  type AnalysisResult,
  type Job,
  type JobError,
  type Topology,
  type VerdictRequest,
} from '@trawl/contracts';
import type { Broker, Consumer, Delivery } from '@trawl/platform';
import type { Logger } from 'pino';
import { type BackoffOptions, backoffDelay } from './backoff.ts';
import type { DedupStore, JobOrigin } from './dedup-store.ts';
import { RetrieverError } from './errors.ts';
import type { MailMetrics } from './metrics.ts';
import type { RetrieverClient } from './retriever-client.ts';

export interface VerdictOptions {
  /** Callback attempts per delivery of an event. */
  attempts: number;
  backoff: BackoffOptions;
  /** Deliveries of one event after which it is logged and dropped. */
  maxDeliveries: number;
  prefetch: number;
}

/**
 * What a retriever is told when the analysis failed: a `review` verdict (a person should look at the
 * message) with the error, so that a failure never silently leaves the message untouched.
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
  };
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
        d.metrics.verdicts.inc({
          retriever: origin.retriever,
          action: req.result.recommended_action,
        });
        d.logger.info(
          {
            retriever: origin.retriever,
            id: req.id,
            job_id: req.job_id,
            action: req.result.recommended_action,
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
      const parsed = AnalysisEventSchema.safeParse(delivery.body);
      if (!parsed.success) {
        d.logger.warn({ routing_key: delivery.routingKey }, 'not an analysis event; dropped');
        await delivery.ack();
        return;
      }
      const ev = parsed.data;
      const origin = await resolveOrigin(ev);
      if (!origin || !d.retrievers.has(origin.retriever)) {
        await delivery.ack(); // not a message from one of our retrievers
        return;
      }
      const signal = abort.signal;
      const ok = await send(
        origin,
        verdictRequest(origin.id, ev.job_id, ev.result, ev.error),
        signal,
      );
      if (signal.aborted) return; // stopped: left unacked, the broker hands it out again
      if (ok) {
        await delivery.ack();
      } else if (delivery.deliveryCount >= d.options.maxDeliveries) {
        d.logger.error(
          {
            retriever: origin.retriever,
            id: origin.id,
            job_id: ev.job_id,
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

  return {
    async start(): Promise<void> {
      abort = new AbortController();
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
      consumer = await d.broker.consume(t.queues.mailVerdicts, handle, {
        prefetch: d.options.prefetch,
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

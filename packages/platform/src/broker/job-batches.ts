/**
 * Analysis requests in batches (ADR 008). A gateway publishes the jobs one group commit stored as
 * one message, `{ "jobs": [request, …] }`, so the broker confirms, stores, delivers and forgets one
 * message instead of N. Consumers wrap their handler with `expandJobBatches` and keep handling one
 * job per delivery:
 *
 *  - a batch's first delivery becomes one virtual delivery per job, run at once (at most
 *    `maxInFlight` jobs in the process at a time); the batch is acknowledged when every job has been
 *    settled: ack() settles it, nack({requeue:true}) publishes that job again as a message of its
 *    own, nack({requeue:false}) sends it to the dead-letter exchange;
 *  - a batch that comes back (redelivered: its consumer died, or a job could not be settled) is
 *    split: every job is published again as a message of its own and the batch is acknowledged. So
 *    one job that keeps crashing its consumer holds the others back once at most, and the broker's
 *    delivery limit counts that job alone. Jobs already finished are skipped by the claim (one
 *    result per job, as for any redelivered message).
 *
 * A plain (single-job) message is passed through unchanged.
 */
import type { Delivery, DeliveryHandler } from './types.ts';

/** Jobs in one batch at most (a gateway's group commit stores at most 64 rows at once). */
export const MAX_JOBS_PER_BATCH = 256;

/** The jobs of a batch message, or undefined for any other body. */
export function batchJobs(body: unknown): unknown[] | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const jobs = (body as { jobs?: unknown }).jobs;
  if (!Array.isArray(jobs) || jobs.length === 0 || jobs.length > MAX_JOBS_PER_BATCH)
    return undefined;
  return jobs;
}

/** The body of a batch message holding `jobs` (more than one: one job goes as itself). */
export function batchBody(jobs: readonly unknown[]): unknown {
  return jobs.length === 1 ? jobs[0] : { jobs };
}

/** Publishes analysis requests, the ones of one event-loop turn as one batch message. */
export interface RequestBatcher {
  /** Resolves when the broker confirmed the message holding this request; rejects when it did not. */
  publish(request: unknown): Promise<void>;
}

/**
 * Collects the requests published in one event-loop turn (the jobs of one group commit arrive
 * together) and publishes them as one message on the next tick, or at once when `maxJobs` are
 * waiting. Every caller shares that message's confirm or failure.
 */
export function createRequestBatcher(
  publish: (body: unknown) => Promise<void>,
  maxJobs = 64,
): RequestBatcher {
  let pending: { request: unknown; resolve: () => void; reject: (e: unknown) => void }[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    const batch = pending;
    pending = [];
    if (batch.length === 0) return;
    publish(batchBody(batch.map((p) => p.request))).then(
      () => {
        for (const p of batch) p.resolve();
      },
      (err: unknown) => {
        for (const p of batch) p.reject(err);
      },
    );
  };
  return {
    publish(request) {
      return new Promise<void>((resolve, reject) => {
        pending.push({ request, resolve, reject });
        if (pending.length >= Math.min(maxJobs, MAX_JOBS_PER_BATCH)) flush();
        else if (!scheduled) {
          scheduled = true;
          // the jobs of one group commit are released in one run of the microtask queue: a tick
          // after it gathers them all, without waiting for the event loop's I/O phase
          process.nextTick(flush);
        }
      });
    },
  };
}

/** A counting semaphore: at most `n` holders at once, the others wait in order. */
function semaphore(n: number) {
  let free = Math.max(1, n);
  const waiting: (() => void)[] = [];
  return {
    async acquire(): Promise<void> {
      if (free > 0) {
        free--;
        return;
      }
      await new Promise<void>((resolve) => waiting.push(resolve));
    },
    release(): void {
      const next = waiting.shift();
      if (next) next();
      else free++;
    },
  };
}

/** What expanding a batch of jobs may do with a job it cannot keep in the batch. */
export interface ExpandOptions {
  /** Publishes one job as a message of its own on the work queue (confirmed). */
  requeue(job: unknown): Promise<void>;
  /** Publishes one job to the dead-letter exchange (confirmed). */
  reject(job: unknown): Promise<void>;
  /** Jobs handled at once at most, across all deliveries (the consumer's prefetch). */
  maxInFlight: number;
}

/** Wraps a one-job handler so that it also takes batch messages (see the module comment). */
export function expandJobBatches(handler: DeliveryHandler, o: ExpandOptions): DeliveryHandler {
  const slots = semaphore(o.maxInFlight);
  const run = async (d: Delivery): Promise<void> => {
    await slots.acquire();
    try {
      await handler(d);
    } finally {
      slots.release();
    }
  };
  return async (d) => {
    const jobs = batchJobs(d.body);
    if (!jobs) return run(d);
    if (d.redelivered || d.deliveryCount > 1) {
      try {
        await Promise.all(jobs.map((j) => o.requeue(j)));
      } catch {
        await d.nack({ requeue: true });
        return;
      }
      await d.ack();
      return;
    }
    let unsettled = false;
    await Promise.all(
      jobs.map(async (job) => {
        let settled = false;
        const settle = async (how: () => Promise<void>) => {
          if (settled) return;
          settled = true;
          try {
            await how();
          } catch {
            unsettled = true;
          }
        };
        const v: Delivery = {
          body: job,
          routingKey: d.routingKey,
          exchange: d.exchange,
          messageId: d.messageId,
          headers: d.headers,
          redelivered: false,
          deliveryCount: 1,
          ack: () => settle(async () => undefined),
          nack: (opts) => settle(() => (opts?.requeue === false ? o.reject(job) : o.requeue(job))),
        };
        try {
          await run(v);
        } catch {
          // as a consumer that died with the message: the batch comes back
        }
        if (!settled) unsettled = true;
      }),
    );
    if (unsettled) await d.nack({ requeue: true });
    else await d.ack();
  };
}

/**
 * Wraps the dead-letter handler: a dead batch (its splitting kept failing) is handled job by job
 * with the batch's headers; it is acknowledged when every job was, and returned to its queue when
 * any job asked for that.
 */
export function expandDeadBatches(handler: DeliveryHandler): DeliveryHandler {
  return async (d) => {
    const jobs = batchJobs(d.body);
    if (!jobs) return handler(d);
    let requeue = false;
    for (const job of jobs) {
      await handler({
        ...d,
        body: job,
        ack: async () => undefined,
        nack: async (opts) => {
          if (opts?.requeue !== false) requeue = true;
        },
      });
    }
    if (requeue) await d.nack({ requeue: true });
    else await d.ack();
  };
}

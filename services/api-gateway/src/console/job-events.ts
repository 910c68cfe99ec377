import { randomUUID } from 'node:crypto';
import type { JobEvent } from '@trawl/console';
import { AnalysisEvent, AnalysisRequestMessage, type Topology } from '@trawl/contracts';
import { type Broker, batchJobs, type Consumer } from '@trawl/platform';

export type { JobEvent };

type JobEventListener = (e: JobEvent) => void;

export interface JobEventHub {
  /** Starts following the broker (once; again after a failure). Rejects when it cannot. */
  ready(): Promise<void>;
  /** Adds a listener; returns its removal. Call after ready(). */
  subscribe(fn: JobEventListener): () => void;
  close(): Promise<void>;
}

/** The events of one broker message: requests (maybe a batch) or a result event. */
function jobEventsOf(exchange: string, t: Topology, body: unknown): JobEvent[] {
  if (exchange === t.exchanges.analysis) {
    const out: JobEvent[] = [];
    for (const item of batchJobs(body) ?? [body]) {
      const r = AnalysisRequestMessage.safeParse(item);
      if (!r.success) continue;
      out.push({
        type: 'job.created',
        job_id: r.data.job_id,
        email_id: r.data.email_id,
        workflow: r.data.workflow_id,
        at: r.data.submitted_at,
      });
    }
    return out;
  }
  const e = AnalysisEvent.safeParse(body);
  if (!e.success) return [];
  const d = e.data;
  return [
    {
      type: d.event === 'analysis.completed' ? 'job.completed' : 'job.failed',
      job_id: d.job_id,
      email_id: d.email_id,
      workflow: d.workflow,
      at: d.at,
      ...(d.result
        ? {
            result: {
              is_phishing: d.result.is_phishing,
              threat_level: d.result.threat_level,
              confidence: d.result.confidence,
              recommended_action: d.result.recommended_action,
            },
          }
        : {}),
      ...(d.error ? { error: { code: d.error.code, message: d.error.message } } : {}),
    },
  ];
}

/**
 * Follows job creation and completion for the console, on any replica and in both modes: a
 * per-replica exclusive queue (deleted with its connection, messages kept 60 s at most) bound to
 * `analysis.requested` on trawl.analysis (each request message is also copied here: job.created)
 * and to `analysis.completed` / `analysis.failed` on trawl.results. Started by the first stream,
 * so a gateway nobody watches pays nothing.
 */
export function createJobEventHub(opts: {
  broker: Broker;
  topology: Topology;
  logger: { warn(obj: object, msg: string): void };
}): JobEventHub {
  const { broker, topology: t, logger } = opts;
  const listeners = new Set<JobEventListener>();
  let consumer: Consumer | undefined;
  let queue: string | undefined;
  let starting: Promise<void> | undefined;
  let closed = false;

  async function start(): Promise<void> {
    const name = `${t.exchanges.results}.console.${randomUUID()}`;
    await broker.assertQueue(name, {
      type: 'classic',
      durable: false,
      exclusive: true,
      autoDelete: true,
      messageTtlMs: 60_000,
    });
    queue = name;
    await broker.bindQueue(name, t.exchanges.results, t.routingKeys.analysisCompleted);
    await broker.bindQueue(name, t.exchanges.results, t.routingKeys.analysisFailed);
    await broker.bindQueue(name, t.exchanges.analysis, t.routingKeys.analysisRequested);
    consumer = await broker.consume(
      name,
      async (d) => {
        try {
          for (const e of jobEventsOf(d.exchange, t, d.body)) {
            for (const fn of listeners) fn(e);
          }
        } catch (err) {
          logger.warn({ err }, 'console event could not be delivered');
        }
        await d.ack();
      },
      { prefetch: 64 },
    );
  }

  return {
    ready() {
      if (closed) return Promise.reject(new Error('closed'));
      starting ??= start().catch((err: unknown) => {
        starting = undefined;
        throw err;
      });
      return starting;
    },
    subscribe(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    async close() {
      closed = true;
      listeners.clear();
      await consumer?.cancel().catch(() => undefined);
      if (queue) await broker.deleteQueue(queue).catch(() => undefined);
      consumer = undefined;
    },
  };
}

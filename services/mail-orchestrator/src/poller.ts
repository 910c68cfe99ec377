import type { BackoffPolicy, BackoffState } from '@trawl/contracts';
import type { Logger } from 'pino';
import { ACKED_OUTCOMES, type MessageProcessor, type Outcome } from './message-processor.ts';
import type { MailMetrics } from './metrics.ts';
import type { RetrieverClient } from './retriever-client.ts';

export interface PolledRetriever {
  client: RetrieverClient;
  priority: number;
  backoff: BackoffState;
}

export interface PollerOptions {
  /** Pause between passes when no retriever had more to give (ms). */
  pollIntervalMs: number;
  /** max_messages per fetch. */
  batchSize: number;
  /** Messages of one batch submitted at once. */
  concurrency: number;
  backoff: BackoffPolicy;
}

/** What one polling pass did, per retriever. */
export interface PassReport {
  /** Per retriever polled in this pass, in the order polled. */
  polled: { retriever: string; fetched: number; outcomes: Outcome['kind'][]; error?: string }[];
  /** Retrievers skipped because they are backing off. */
  skipped: string[];
}

/** Runs `fn` over items with at most `n` at once, keeping order of results. */
async function mapLimit<T, R>(items: T[], n: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.max(1, Math.min(n, items.length)) }, async () => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      out[i] = await fn(items[i] as T);
    }
  });
  await Promise.all(workers);
  return out;
}

/**
 * Polls retrievers in priority order (higher first; ties by name). A failing retriever backs off
 * on its own (exponential, capped) and is skipped until its next attempt is due; the others go on.
 */
export function createPoller(d: {
  retrievers: PolledRetriever[];
  processor: MessageProcessor;
  metrics: MailMetrics;
  logger: Logger;
  options: PollerOptions;
  now: () => number;
}) {
  const order = [...d.retrievers].sort(
    (a, b) => b.priority - a.priority || a.client.name.localeCompare(b.client.name),
  );

  async function pollRetriever(r: PolledRetriever, signal: AbortSignal) {
    const name = r.client.name;
    let messages: Awaited<ReturnType<RetrieverClient['fetch']>>;
    try {
      messages = await r.client.fetch(d.options.batchSize, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      const delay = r.backoff.fail(d.now());
      d.metrics.failures.inc({ retriever: name, stage: 'fetch' });
      d.logger.warn(
        {
          retriever: name,
          failures: r.backoff.failures,
          retry_in_ms: delay,
          err: (err as Error).message,
        },
        'retriever fetch failed; backing off',
      );
      return { retriever: name, fetched: 0, outcomes: [], error: (err as Error).message };
    }
    const backlog = r.client.backlog;
    if (backlog !== undefined) d.metrics.backlog.set({ retriever: name }, backlog);
    const outcomes = await mapLimit(messages, d.options.concurrency, (m) =>
      d.processor.process(name, m, signal),
    );
    if (signal.aborted)
      return { retriever: name, fetched: messages.length, outcomes: outcomes.map((o) => o.kind) };
    const ackIds = messages
      .filter((_, i) => ACKED_OUTCOMES.has((outcomes[i] as Outcome).kind))
      .map((m) => m.id);
    try {
      await r.client.ack(ackIds, signal);
      r.backoff.succeed();
    } catch (err) {
      if (signal.aborted) throw err;
      // Not fatal: the messages come back, are found submitted, and are acked as duplicates.
      const delay = r.backoff.fail(d.now());
      d.metrics.failures.inc({ retriever: name, stage: 'ack' });
      d.logger.warn(
        { retriever: name, ids: ackIds.length, retry_in_ms: delay, err: (err as Error).message },
        'retriever ack failed; backing off',
      );
      return {
        retriever: name,
        fetched: messages.length,
        outcomes: outcomes.map((o) => o.kind),
        error: (err as Error).message,
      };
    }
    return { retriever: name, fetched: messages.length, outcomes: outcomes.map((o) => o.kind) };
  }

  /** One pass over the retrievers that are due. */
  async function pollOnce(signal: AbortSignal = new AbortController().signal): Promise<PassReport> {
    const report: PassReport = { polled: [], skipped: [] };
    for (const r of order) {
      if (signal.aborted) break;
      if (!r.backoff.ready(d.now())) {
        report.skipped.push(r.client.name);
        continue;
      }
      report.polled.push(await pollRetriever(r, signal));
    }
    return report;
  }

  /** When the next pass is due: at once if a retriever had a full batch, else after the interval. */
  function nextDelay(report: PassReport): number {
    const full = report.polled.some(
      (p) =>
        !p.error &&
        p.fetched >= d.options.batchSize &&
        p.outcomes.some((o) => o !== 'busy' && o !== 'failed'),
    );
    if (full) return 0;
    const now = d.now();
    let delay = d.options.pollIntervalMs;
    for (const r of order) {
      if (r.backoff.failures > 0)
        delay = Math.min(delay, Math.max(0, r.backoff.nextAttemptAt - now));
    }
    return delay;
  }

  return { pollOnce, nextDelay, order };
}

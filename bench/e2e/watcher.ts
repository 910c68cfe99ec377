import { type AnalysisEvent, topology } from '@trawl/contracts';
import { createRabbitBroker } from '@trawl/platform';

interface Verdict {
  at: number;
  event: AnalysisEvent['event'];
  /** Terminal events seen for the job (more than 1: the event was delivered again). */
  count: number;
  /**
   * Distinct outcomes (event, verdict, confidence) among those events: more than 1 means two runs
   * of the job both finished and published different verdicts.
   */
  outcomes: Set<string>;
}

function outcomeOf(e: AnalysisEvent): string {
  const r = e.result;
  return r
    ? `${e.event}:${r.is_phishing}:${r.threat_level}:${r.confidence}`
    : `${e.event}:${e.error?.code}`;
}

/**
 * The members of a terminal event the watcher reads, checked by hand: the watcher shares the cores
 * with what it measures, and the full AnalysisEvent schema (the verdict with its evidence) costs
 * more than the rest of its work per event. The services validate what they publish.
 */
function terminalEvent(body: unknown): AnalysisEvent | null {
  if (typeof body !== 'object' || body === null) return null;
  const e = body as Partial<AnalysisEvent>;
  if (typeof e.job_id !== 'string') return null;
  if (e.event !== 'analysis.completed' && e.event !== 'analysis.failed') return null;
  return e as AnalysisEvent;
}

export interface ResultWatcher {
  /** job_id -> first terminal event seen (performance.now() time) and how many were seen. */
  verdicts: Map<string, Verdict>;
  /** Resolves when every id of `ids` has a verdict, or at `deadline` (performance.now()). */
  waitFor(ids: Iterable<string>, deadline: number): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * Subscribes to trawl.results of a prefix with a queue of its own and records every
 * analysis.completed / analysis.failed per job. `durable` (the chaos tests): a durable queue, so a
 * RabbitMQ restart loses no event. Otherwise (the benchmark, where nothing restarts) a transient
 * queue: the watcher only observes, and RabbitMQ writing each event to disk for it would be the
 * observer's cost counted as Trawl's (Trawl publishes the events either way; its subscribers bind
 * their own queues).
 */
export async function watchResults(
  url: string,
  prefix: string,
  opts: { durable: boolean } = { durable: true },
): Promise<ResultWatcher> {
  const t = topology(prefix);
  const broker = createRabbitBroker({ url, connectionName: `${prefix}-watch` });
  const queue = `${prefix}.e2e.watch`;
  await broker.assertExchange(t.exchanges.results, 'topic');
  await broker.assertQueue(queue, { type: 'classic', durable: opts.durable });
  await broker.bindQueue(queue, t.exchanges.results, '#');
  const verdicts = new Map<string, Verdict>();
  let wake: (() => void) | null = null;
  const consumer = await broker.consume(
    queue,
    async (d) => {
      const ev = terminalEvent(d.body);
      if (ev) {
        const v = verdicts.get(ev.job_id);
        if (v) {
          v.count += 1;
          v.outcomes.add(outcomeOf(ev));
        } else {
          verdicts.set(ev.job_id, {
            at: performance.now(),
            event: ev.event,
            count: 1,
            outcomes: new Set([outcomeOf(ev)]),
          });
        }
        wake?.();
      }
      await d.ack();
    },
    { prefetch: 500 },
  );
  return {
    verdicts,
    async waitFor(ids, deadline) {
      const pending = new Set(ids);
      for (;;) {
        for (const id of pending) if (verdicts.has(id)) pending.delete(id);
        if (pending.size === 0) return true;
        const left = deadline - performance.now();
        if (left <= 0) return false;
        await new Promise<void>((r) => {
          const timer = setTimeout(r, Math.min(left, 500));
          wake = () => {
            clearTimeout(timer);
            wake = null;
            r();
          };
        });
      }
    },
    async close() {
      await consumer.cancel().catch(() => {});
      await broker.deleteQueue(queue).catch(() => {});
      await broker.close().catch(() => {});
    },
  };
}

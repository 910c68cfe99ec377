/**
 * A steady load across several gateways, as clients behind a load balancer send it: one message
 * every 1/rate s to the next healthy gateway (GET /health every second, 3 s to answer; three
 * failures in a row take a gateway out, one success puts it back), each submission given
 * `timeoutMs` to be answered. Bounded: it stops at `stop()` and never has more than `maxInFlight`
 * submissions open.
 */
import { Agent } from 'node:http';
import type { CorpusMessage } from '../../bench/e2e/corpus.ts';
import { post } from '../../bench/e2e/load.ts';

interface Accepted {
  /** Date.now() when the gateway answered. */
  at: number;
  gateway: string;
}

export interface SteadyLoad {
  accepted: Map<string, Accepted>;
  /** Submissions not accepted, by answer ('error': none within the timeout), with their times. */
  refused: { at: number; answer: string }[];
  /** Date.now() of each send. */
  sent: number[];
  /** Ends the load; resolves when every open submission is answered or timed out. */
  stop(): Promise<void>;
}

export function startSteadyLoad(o: {
  /** What is sent, in turn (again from the start when all were sent). */
  messages: CorpusMessage[];
  gateways: string[];
  headers: Record<string, string>;
  rate: number;
  timeoutMs: number;
  maxInFlight: number;
}): SteadyLoad {
  const agent = new Agent({ keepAlive: true, maxSockets: o.maxInFlight });
  const healthy = new Set(o.gateways);
  const accepted = new Map<string, Accepted>();
  const refused: { at: number; answer: string }[] = [];
  const sent: number[] = [];
  const open = new Set<Promise<void>>();
  let stopped = false;
  let turn = 0;

  const failures = new Map<string, number>();
  const failed = (g: string) => {
    const n = (failures.get(g) ?? 0) + 1;
    failures.set(g, n);
    if (n >= 3) healthy.delete(g);
  };
  const health = setInterval(() => {
    for (const g of o.gateways) {
      void fetch(`${g}/health`, { signal: AbortSignal.timeout(3000) })
        .then(async (r) => {
          await r.arrayBuffer();
          if (!r.ok) return failed(g);
          failures.set(g, 0);
          healthy.add(g);
        })
        .catch(() => failed(g));
    }
  }, 1000);

  async function one(gateway: string, m: CorpusMessage): Promise<void> {
    const url = new URL(`${gateway}/api/v1/analyze/raw`);
    const r = await post(
      url,
      agent,
      { ...o.headers, 'content-type': 'message/rfc822' },
      m.raw,
      o.timeoutMs,
    );
    const at = Date.now();
    if (r !== 'error' && r.status >= 200 && r.status < 300) {
      const id = (JSON.parse(r.text) as { job_id?: string }).job_id;
      if (id) {
        accepted.set(id, { at, gateway });
        return;
      }
    }
    refused.push({ at, answer: r === 'error' ? 'error' : String(r.status) });
  }

  const t0 = performance.now();
  let n = 0;
  const tick = () => {
    if (stopped) return;
    const now = performance.now();
    // Every send that is due (a late timer catches up, so the offered rate holds).
    while (t0 + (n * 1000) / o.rate <= now) {
      n += 1;
      const targets = o.gateways.filter((g) => healthy.has(g));
      sent.push(Date.now());
      if (targets.length === 0 || open.size >= o.maxInFlight) {
        refused.push({ at: Date.now(), answer: targets.length === 0 ? 'no-gateway' : 'backlog' });
        continue;
      }
      const m = o.messages[n % o.messages.length] as CorpusMessage;
      const p = one(targets[turn++ % targets.length] as string, m);
      open.add(p);
      void p.finally(() => open.delete(p));
    }
    setTimeout(tick, Math.max(1, t0 + (n * 1000) / o.rate - performance.now()));
  };
  tick();

  return {
    accepted,
    refused,
    sent,
    async stop() {
      stopped = true;
      clearInterval(health);
      await Promise.all([...open]);
      agent.destroy();
    },
  };
}

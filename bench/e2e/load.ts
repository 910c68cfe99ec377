import { Agent, request } from 'node:http';
import type { CorpusMessage } from './corpus.ts';

interface Submission {
  jobId: string;
  sentAt: number;
}

export interface SubmitStats {
  accepted: Map<string, Submission>;
  /** HTTP status (or 'error' for no answer) -> count of submissions not accepted. */
  rejected: Record<string, number>;
  /** performance.now() of the first send and of the last answer. */
  startedAt: number;
  endedAt: number;
}

export interface SubmitOptions {
  gatewayUrl: string;
  headers: Record<string, string>;
  /** Offered rate in msgs/s; undefined: as fast as the gateway accepts (closed loop). */
  rate?: number;
  /** Requests in flight at most. */
  concurrency: number;
  /** Stop sending at this performance.now() time (bounded runs). */
  deadline?: number;
  workflowId?: string;
  /** Called with every answer (chaos tests count them while a fault is on). */
  onAnswer?: (status: number | 'error') => void;
  /** Called with every accepted job id as soon as it is answered. */
  onAccepted?: (jobId: string) => void;
  /** Stop early when it answers true (checked before each send). */
  stop?: () => boolean;
}

/** One POST on a keep-alive agent: status and body text, or 'error' (no answer in `timeoutMs`). */
export function post(
  url: URL,
  agent: Agent,
  headers: Record<string, string>,
  body: Buffer,
  timeoutMs = 30_000,
): Promise<{ status: number; text: string } | 'error'> {
  return new Promise((resolve) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: { ...headers, 'content-length': String(body.length) },
        timeout: timeoutMs,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', () => resolve('error'));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve('error'));
    req.end(body);
  });
}

/**
 * Posts every message to /api/v1/analyze/raw, at a fixed rate or closed-loop. node:http with a
 * keep-alive agent rather than fetch: the load generator shares the machine's cores with what it
 * measures, and undici's fetch costs several times more CPU per request.
 */
export async function submitAll(
  messages: CorpusMessage[],
  opts: SubmitOptions,
): Promise<SubmitStats> {
  const q = opts.workflowId ? `?workflow_id=${encodeURIComponent(opts.workflowId)}` : '';
  const url = new URL(`${opts.gatewayUrl}/api/v1/analyze/raw${q}`);
  const agent = new Agent({ keepAlive: true, maxSockets: opts.concurrency });
  const headers = { ...opts.headers, 'content-type': 'message/rfc822' };
  const accepted = new Map<string, Submission>();
  const rejected: Record<string, number> = {};
  const startedAt = performance.now();
  let next = 0;
  let sent = 0;

  async function one(m: CorpusMessage): Promise<void> {
    const sentAt = performance.now();
    let status: number | 'error' = 'error';
    const r = await post(url, agent, headers, m.raw);
    if (r !== 'error') {
      status = r.status;
      let jobId: string | undefined;
      try {
        jobId = (JSON.parse(r.text) as { job_id?: string }).job_id;
      } catch {
        jobId = undefined;
      }
      if (status >= 200 && status < 300 && jobId) {
        accepted.set(jobId, { jobId, sentAt });
        opts.onAccepted?.(jobId);
      }
    }
    if (!(typeof status === 'number' && status < 300)) {
      rejected[String(status)] = (rejected[String(status)] ?? 0) + 1;
    }
    opts.onAnswer?.(status);
  }

  async function worker(): Promise<void> {
    for (;;) {
      if (opts.stop?.()) return;
      if (opts.deadline !== undefined && performance.now() > opts.deadline) return;
      const i = next++;
      if (i >= messages.length) return;
      if (opts.rate !== undefined) {
        const due = startedAt + (i * 1000) / opts.rate;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
      sent += 1;
      await one(messages[i] as CorpusMessage);
    }
  }
  try {
    await Promise.all(Array.from({ length: opts.concurrency }, () => worker()));
  } finally {
    agent.destroy();
  }
  void sent;
  return { accepted, rejected, startedAt, endedAt: performance.now() };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx] as number;
}

/** Latency percentiles, in milliseconds. */
export interface LatencyMs {
  p50: number;
  p95: number;
  p99: number;
}

/** The p50, p95 and p99 of `sorted` (ascending). */
export function latencyOf(sorted: number[]): LatencyMs {
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99) };
}

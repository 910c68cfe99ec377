import { execFile } from 'node:child_process';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Timing a service's `/health` while hostile work runs (issue 28), and sending large bodies the
 * way a hostile client does: streamed, so a server that answers early is seen answering early.
 */

export interface BodyAnswer {
  name: string;
  status: number;
  ms: number;
  /** Bytes of the request body written when the answer's head arrived. */
  sentWhenAnswered: number;
  error?: string;
}

/**
 * POSTs a large body (generated as it is sent, never held whole) to each target at once, from a
 * process of its own (an attacker's client costs the server's process nothing), and answers each
 * answer as soon as it is complete; the rest of a body is not sent once it is.
 */
export async function postLargeBodies(
  targets: { name: string; url: string; bytes: number; headers?: Record<string, string> }[],
): Promise<BodyAnswer[]> {
  const script = fileURLToPath(new URL('./large-body-client.mjs', import.meta.url));
  const { stdout } = await run(process.execPath, [script, JSON.stringify(targets)], {
    maxBuffer: 1024 * 1024,
  });
  return JSON.parse(stdout) as BodyAnswer[];
}

/** GET `url`; its status and how long the answer took. */
function timedGet(url: string): Promise<{ status: number; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    request(url, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t0 }));
    })
      .on('error', reject)
      .end();
  });
}

/**
 * Polls `healthUrl` every 20 ms while `work` runs; answers its result, the slowest `/health`
 * answer, how many were made, and any answer that was not 200.
 */
export async function healthWhile<T>(
  healthUrl: string,
  work: Promise<T>,
): Promise<{ result: T; maxMs: number; polls: number; failures: number }> {
  let done = false;
  let maxMs = 0;
  let polls = 0;
  let failures = 0;
  const poll = (async () => {
    while (!done) {
      const r = await timedGet(healthUrl).catch(() => ({ status: 0, ms: 0 }));
      polls++;
      if (r.status !== 200) failures++;
      maxMs = Math.max(maxMs, r.ms);
      await new Promise((res) => setTimeout(res, 20));
    }
  })();
  try {
    const result = await work;
    return { result, maxMs, polls, failures };
  } finally {
    done = true;
    await poll;
  }
}

import { request } from 'node:http';

/**
 * Timing a service's `/health` while hostile work runs (issue 28), and sending a large body the
 * way a hostile client does: streamed, so a server that answers early is seen answering early.
 */

export interface BodyAnswer {
  status: number;
  body: string;
  ms: number;
  /** Bytes of the request body written when the answer's head arrived. */
  sentWhenAnswered: number;
}

/**
 * POSTs `bytes` bytes of `fill` (generated as they are sent, never held whole) to `url`, and
 * answers as soon as the answer is complete; the rest of the body is not sent once it is.
 */
export function postLargeBody(
  url: string,
  o: { bytes: number; headers?: Record<string, string>; fill?: string },
): Promise<BodyAnswer> {
  const t0 = performance.now();
  const chunk = Buffer.from((o.fill ?? '{"a":[1,2,3],"b":"xxxxxxxx"},').repeat(2048));
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    let sentWhenAnswered = -1;
    const req = request(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': String(o.bytes),
          ...o.headers,
        },
      },
      (res) => {
        sentWhenAnswered = sent;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          answered = true;
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            ms: performance.now() - t0,
            sentWhenAnswered,
          });
          req.destroy();
        });
        res.on('error', reject);
      },
    );
    // the server may answer and close before it has read the whole body: that is the point
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (answered || err.code === 'EPIPE' || err.code === 'ECONNRESET') return;
      reject(err);
    });
    const pump = () => {
      while (!answered && sent < o.bytes) {
        const n = Math.min(chunk.length, o.bytes - sent);
        sent += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          req.once('drain', pump);
          return;
        }
      }
      if (!answered) req.end();
    };
    pump();
  });
}

/** GET `url`; its status and how long the answer took. */
export function timedGet(url: string): Promise<{ status: number; ms: number }> {
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

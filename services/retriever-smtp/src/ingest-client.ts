import { fetchBounded } from '@trawl/contracts';
import { z } from 'zod';

/** The answer of POST /internal/ingest for one message (docs/mail-ingestion.md, "Pushed mail"). */
const IngestResult = z.object({
  id: z.string(),
  status: z.enum(['accepted', 'duplicate', 'rejected', 'busy', 'failed']),
  job_id: z.string().optional(),
  detail: z.string().optional(),
});
const IngestAnswer = z.object({ results: z.array(IngestResult) });

/** What a push answered: a job (new or known), a rejected message, Trawl unavailable, or the filter refused. */
export type Submission =
  /** Trawl has (or had) a job for it: its verdict comes on /internal/verdict. */
  | { kind: 'accepted'; jobId?: string | undefined; duplicate: boolean }
  /** The gateway will never take it: its `unanalyzed` verdict is on its way; act now. */
  | { kind: 'rejected'; detail: string }
  /** Trawl cannot take it now (down, busy, stopping): answer as for a deadline. */
  | { kind: 'unavailable'; reason: string }
  /** Trawl refused the filter itself (credential, request): a configuration error. */
  | { kind: 'refused'; status: number; reason: string };

/** Largest ingest answer read (one result per message: a few hundred bytes). */
const MAX_ANSWER_BYTES = 64 * 1024;

/** Pushes one message for analysis and says what became of it. */
export interface IngestClient {
  submit(msg: { id: string; raw: Buffer; to: string[] }, signal: AbortSignal): Promise<Submission>;
}

/** The client that pushes a message to the mail orchestrator's ingest endpoint (answers read bounded). */
export function createIngestClient(opts: {
  url: string;
  credential?: string | undefined;
}): IngestClient {
  const endpoint = new URL('/internal/ingest', opts.url).toString();
  return {
    async submit(msg, signal) {
      const body = JSON.stringify({
        messages: [
          {
            id: msg.id,
            raw: msg.raw.toString('base64'),
            ...(msg.to.length > 0 ? { envelope: { to: msg.to.slice(0, 16) } } : {}),
          },
        ],
      });
      let res: Awaited<ReturnType<typeof fetchBounded>>;
      try {
        // the caller's signal is the message's deadline; the answer is small, and read as such
        // (an answer outside 2xx too: a 503 carries the results of a busy orchestrator)
        res = await fetchBounded(
          endpoint,
          {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              ...(opts.credential ? { 'x-internal-api-key': opts.credential } : {}),
            },
            body,
            redirect: 'error',
          },
          {
            maxBytes: MAX_ANSWER_BYTES,
            errorBytes: MAX_ANSWER_BYTES,
            timeoutMs: 600_000,
            signal,
          },
        );
      } catch (err) {
        const e = err as Error & { cause?: { code?: string }; kind?: string };
        const reason =
          e.name === 'AbortError' || e.name === 'TimeoutError' || e.kind === 'timeout'
            ? 'Trawl did not answer in time'
            : e.kind === 'too-large'
              ? 'Trawl answered more than expected'
              : `Trawl unreachable${e.cause?.code ? ` (${e.cause.code})` : ''}`;
        return { kind: 'unavailable', reason };
      }
      const text = res.body.toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      const parsed = IngestAnswer.safeParse(json);
      const r = parsed.success ? parsed.data.results.find((x) => x.id === msg.id) : undefined;
      if (r) {
        switch (r.status) {
          case 'accepted':
            return { kind: 'accepted', jobId: r.job_id, duplicate: false };
          case 'duplicate':
            return { kind: 'accepted', jobId: r.job_id, duplicate: true };
          case 'rejected':
            return { kind: 'rejected', detail: r.detail ?? 'refused' };
          default:
            return { kind: 'unavailable', reason: `Trawl is ${r.status}` };
        }
      }
      if (res.status >= 500 || res.status === 429 || res.status === 408) {
        return { kind: 'unavailable', reason: `Trawl answered ${res.status}` };
      }
      return {
        kind: 'refused',
        status: res.status,
        reason: `Trawl refused the request (${res.status})`,
      };
    },
  };
}

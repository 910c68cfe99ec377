import { credentialDeriver, ERROR_CODES, Job, JobList, SubmitResponse } from '@trawl/contracts';
import { MAIL_ERROR_CODES } from '@trawl/mail';
import { z } from 'zod';
import { GatewayAuthError, GatewayRefusedError, GatewayUnavailableError } from './errors.ts';
import { failureText, type HttpAnswer, httpCall, jsonOf } from './http.ts';

export interface GatewayClientOptions {
  /** Base URL of the api-gateway, e.g. http://api-gateway:8000 */
  baseUrl: string;
  /**
   * The platform key. It is never sent: a message goes with the credential of the retriever it
   * came from (`retriever:<name>`: the gateway binds its origin to it), job reads with the mail
   * orchestrator's own (`service:mail-orchestrator`). See docs/security.md.
   */
  internalApiKey: string;
  timeoutMs: number;
  /** Query workflow_id for raw submissions (default: the gateway's default workflow). */
  workflowId?: string | undefined;
  /**
   * How a request reaches the gateway: HTTP to `baseUrl` (default), or a direct call into a
   * gateway in the same process (inProcessTransport: no socket, the raw bytes passed as they are).
   */
  transport?: GatewayTransport | undefined;
}

/** One request to the gateway: method, path (with its query), headers, body. */
export type GatewayTransport = (
  method: 'GET' | 'POST',
  path: string,
  init: {
    headers: Record<string, string>;
    body?: Buffer;
    timeoutMs: number;
    maxBytes: number;
    signal?: AbortSignal | undefined;
  },
) => Promise<HttpAnswer>;

/** What became of one submitted message: accepted, refused for good, or to try again. */
export type SubmitOutcome =
  | { kind: 'accepted'; jobId: string; emailId: string }
  /**
   * The gateway will never take this message (it is unparseable, invalid or too large): ack it,
   * count it, do not retry. Only a refusal about the message itself (see refusesTheMessage).
   */
  | { kind: 'rejected'; status: number; detail: string; code: string | undefined };

/** The fields of the gateway's problem answer (RFC 9457) this client reads; anything else passes. */
export const GatewayProblem = z.object({
  code: z.string().optional(),
  detail: z.string().optional(),
  errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
});
export type GatewayProblem = z.infer<typeof GatewayProblem>;

function problemOf(res: HttpAnswer): GatewayProblem {
  const parsed = GatewayProblem.safeParse(jsonOf(res.text));
  return parsed.success ? parsed.data : {};
}

/** Codes by which the gateway refuses a message for what it is: no retry can change the answer. */
const MESSAGE_REFUSALS: ReadonlySet<string> = new Set([
  MAIL_ERROR_CODES.unparseable,
  MAIL_ERROR_CODES.invalid,
  MAIL_ERROR_CODES.tooLarge,
  ERROR_CODES.payloadTooLarge,
]);

/** Validation problems about the request rather than the message (the orchestrator's settings). */
const REQUEST_PATHS = ['/query', '/workflow_id'];

/**
 * True when a 4xx answer refuses the message itself (final: acked, counted, never retried); false
 * when it refuses the request (untrusted Host, unknown workflow, route or media type, a proxy's own
 * 400): a configuration error that no message can get past, so nothing may be acked for it.
 */
export function refusesTheMessage(status: number, problem: GatewayProblem): boolean {
  // 413 is about the body whoever answers it (the gateway's limit, a proxy's).
  if (status === 413) return true;
  if (problem.code !== undefined && MESSAGE_REFUSALS.has(problem.code)) return true;
  if (problem.code === ERROR_CODES.validation && status === 422) {
    const errors = problem.errors ?? [];
    return (
      errors.length > 0 &&
      errors.every((e) => !REQUEST_PATHS.some((p) => e.path === p || e.path.startsWith(`${p}/`)))
    );
  }
  return false;
}

/**
 * The error for an answer that is neither success nor a refusal of the message: 401/403 and other
 * 4xx are configuration (GatewayAuthError, GatewayRefusedError), 408/429/5xx are passing
 * (GatewayUnavailableError). All are retried: the message is not acked and its key is released.
 */
function failureOf(res: HttpAnswer, what: string): Error {
  const problem = problemOf(res);
  if (res.status === 401 || res.status === 403)
    return new GatewayAuthError(res.status, problem.code);
  if (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429) {
    return new GatewayRefusedError(res.status, problem.code, problem.detail);
  }
  const code = problem.code ? ` ${problem.code}` : '';
  return new GatewayUnavailableError(`${what}: the gateway answered ${res.status}${code}`);
}

/** Where a raw message comes from: sent to the gateway as `X-Trawl-*` headers. */
interface SubmitOrigin {
  retriever: string;
  messageId: string;
  /** The mailbox(es) the retriever got it in (RetrievedMessage.envelope.to), already validated. */
  envelopeTo?: readonly string[] | undefined;
  /** The retriever is a reporting mailbox: submitted with `report=true` (issue 16). */
  report?: boolean | undefined;
}

/** The slice of the gateway's HTTP API the mail orchestrator uses. */
export interface GatewayClient {
  /**
   * Throws GatewayUnavailableError (retry later) or a GatewayMisconfiguredError (GatewayAuthError,
   * GatewayRefusedError: configuration; retry later too, and log it as an error).
   */
  submitRaw(raw: Buffer, origin: SubmitOrigin, signal?: AbortSignal): Promise<SubmitOutcome>;
  /** Jobs created at or after `since`, newest first (bounded by `maxPages`). */
  jobsSince(since: Date, signal?: AbortSignal, maxPages?: number): AsyncGenerator<Job>;
  getJob(jobId: string, signal?: AbortSignal): Promise<Job | null>;
}

/** Largest gateway answer read (a page of 200 jobs with their results is a few MiB). */
const MAX_GATEWAY_ANSWER_BYTES = 32 * 1024 * 1024;

/** The mail orchestrator's client of the gateway, over HTTP or in-process (ADR 021). */
export function createGatewayClient(o: GatewayClientOptions): GatewayClient {
  const base = o.baseUrl.replace(/\/+$/, '');
  const derive = credentialDeriver(o.internalApiKey);
  const own = { 'x-internal-api-key': derive({ kind: 'service', id: 'mail-orchestrator' }) };

  const transport: GatewayTransport =
    o.transport ??
    ((method, path, init) =>
      httpCall(`${base}${path}`, {
        method,
        headers: init.headers,
        ...(init.body ? { body: init.body } : {}),
        timeoutMs: init.timeoutMs,
        maxBytes: init.maxBytes,
        signal: init.signal,
      }));

  async function call(
    method: 'GET' | 'POST',
    path: string,
    extra: {
      headers?: Record<string, string>;
      body?: Buffer;
      signal?: AbortSignal | undefined;
      auth?: Record<string, string>;
    },
  ) {
    try {
      return await transport(method, path, {
        headers: { ...(extra.auth ?? own), ...extra.headers },
        ...(extra.body ? { body: extra.body } : {}),
        timeoutMs: o.timeoutMs,
        maxBytes: MAX_GATEWAY_ANSWER_BYTES,
        signal: extra.signal,
      });
    } catch (err) {
      throw new GatewayUnavailableError(`the gateway did not answer: ${failureText(err)}`);
    }
  }

  return {
    async submitRaw(raw, origin, signal) {
      const params = new URLSearchParams();
      if (o.workflowId) params.set('workflow_id', o.workflowId);
      if (origin.report) params.set('report', 'true');
      const q = params.size > 0 ? `?${params}` : '';
      let credential: string;
      try {
        credential = derive({ kind: 'retriever', id: origin.retriever });
      } catch {
        // a retriever name no credential can carry (over 128 characters): configuration
        throw new GatewayAuthError(403, 'TRAWL_ERR_AUTH_NOT_RETRIEVER');
      }
      const res = await call('POST', `/api/v1/analyze/raw${q}`, {
        auth: { 'x-internal-api-key': credential },
        headers: {
          'content-type': 'message/rfc822',
          // Passed through to the job's origin once the gateway accepts them (see docs/mail-ingestion.md).
          'x-trawl-retriever': origin.retriever,
          'x-trawl-message-id': origin.messageId,
          // The recipient when the headers name none (a Bcc copy): see docs/mail-ingestion.md.
          ...(origin.envelopeTo?.length
            ? { 'x-trawl-envelope-to': origin.envelopeTo.join(',') }
            : {}),
        },
        body: raw,
        signal,
      });
      if (res.status === 200 || res.status === 201 || res.status === 202) {
        const parsed = SubmitResponse.safeParse(jsonOf(res.text));
        if (!parsed.success) {
          throw new GatewayUnavailableError('the gateway answered 200 without a job');
        }
        return { kind: 'accepted', jobId: parsed.data.job_id, emailId: parsed.data.email_id };
      }
      if (res.status >= 400 && res.status < 500) {
        const problem = problemOf(res);
        if (refusesTheMessage(res.status, problem)) {
          const detail = [problem.code, problem.detail].filter((x) => x !== undefined).join(': ');
          return {
            kind: 'rejected',
            status: res.status,
            detail: detail || `status ${res.status}`,
            code: problem.code,
          };
        }
      }
      throw failureOf(res, 'submit');
    },

    async *jobsSince(since, signal, maxPages = 20) {
      let cursor: string | undefined;
      for (let page = 0; page < maxPages; page++) {
        const q = new URLSearchParams({ limit: '200' });
        if (cursor) q.set('cursor', cursor);
        const res = await call('GET', `/api/v1/analyze?${q.toString()}`, { signal });
        if (res.status !== 200) throw failureOf(res, 'job list');
        const parsed = JobList.safeParse(jsonOf(res.text));
        if (!parsed.success) throw new GatewayUnavailableError('job list: unexpected body');
        for (const job of parsed.data.items) {
          if (Date.parse(job.created_at) < since.getTime()) return;
          yield job;
        }
        if (!parsed.data.next_cursor) return;
        cursor = parsed.data.next_cursor;
      }
    },

    async getJob(jobId, signal) {
      const res = await call('GET', `/api/v1/analyze/${encodeURIComponent(jobId)}`, { signal });
      if (res.status === 404) return null;
      if (res.status !== 200) throw failureOf(res, 'job read');
      const parsed = Job.safeParse(jsonOf(res.text));
      if (!parsed.success) throw new GatewayUnavailableError('job read: unexpected body');
      return parsed.data;
    },
  };
}

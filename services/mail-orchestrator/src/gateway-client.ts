import { Job, JobList, SubmitResponse } from '@trawl/contracts';
import { GatewayAuthError, GatewayUnavailableError } from './errors.ts';
import { failureText, httpCall, jsonOf } from './http.ts';

export interface GatewayClientOptions {
  /** Base URL of the api-gateway, e.g. http://api-gateway:8000 */
  baseUrl: string;
  internalApiKey: string;
  timeoutMs: number;
  /** Query workflow_id for raw submissions (default: the gateway's default workflow). */
  workflowId?: string | undefined;
}

export type SubmitOutcome =
  | { kind: 'accepted'; jobId: string; emailId: string }
  /** The gateway will never take this message (422, 413, 400): ack it, count it, do not retry. */
  | { kind: 'rejected'; status: number; detail: string };

/** The slice of the gateway's HTTP API the mail orchestrator uses. */
export interface GatewayClient {
  /** Throws GatewayUnavailableError (retry later) or GatewayAuthError (configuration). */
  submitRaw(
    raw: Buffer,
    origin: { retriever: string; messageId: string },
    signal?: AbortSignal,
  ): Promise<SubmitOutcome>;
  /** Jobs created at or after `since`, newest first (bounded by `maxPages`). */
  jobsSince(since: Date, signal?: AbortSignal, maxPages?: number): AsyncGenerator<Job>;
  getJob(jobId: string, signal?: AbortSignal): Promise<Job | null>;
}

export function createGatewayClient(o: GatewayClientOptions): GatewayClient {
  const base = o.baseUrl.replace(/\/+$/, '');
  const auth = { 'x-internal-api-key': o.internalApiKey };

  async function call(
    method: 'GET' | 'POST',
    path: string,
    extra: { headers?: Record<string, string>; body?: Buffer; signal?: AbortSignal | undefined },
  ) {
    try {
      return await httpCall(`${base}${path}`, {
        method,
        headers: { ...auth, ...extra.headers },
        ...(extra.body ? { body: extra.body } : {}),
        timeoutMs: o.timeoutMs,
        signal: extra.signal,
      });
    } catch (err) {
      throw new GatewayUnavailableError(`the gateway did not answer: ${failureText(err)}`);
    }
  }

  return {
    async submitRaw(raw, origin, signal) {
      const q = o.workflowId ? `?workflow_id=${encodeURIComponent(o.workflowId)}` : '';
      const res = await call('POST', `/api/v1/analyze/raw${q}`, {
        headers: {
          'content-type': 'message/rfc822',
          // Passed through to the job's origin once the gateway accepts them (see docs/mail-ingestion.md).
          'x-trawl-retriever': origin.retriever,
          'x-trawl-message-id': origin.messageId,
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
      if (res.status === 401 || res.status === 403) throw new GatewayAuthError(res.status);
      if (res.status === 400 || res.status === 413 || res.status === 415 || res.status === 422) {
        const body = jsonOf(res.text) as { code?: unknown; detail?: unknown } | undefined;
        const detail = [body?.code, body?.detail].filter((x) => typeof x === 'string').join(': ');
        return { kind: 'rejected', status: res.status, detail: detail || `status ${res.status}` };
      }
      throw new GatewayUnavailableError(`the gateway answered ${res.status}`);
    },

    async *jobsSince(since, signal, maxPages = 20) {
      let cursor: string | undefined;
      for (let page = 0; page < maxPages; page++) {
        const q = new URLSearchParams({ limit: '200' });
        if (cursor) q.set('cursor', cursor);
        const res = await call('GET', `/api/v1/analyze?${q.toString()}`, { signal });
        if (res.status === 401 || res.status === 403) throw new GatewayAuthError(res.status);
        if (res.status !== 200) throw new GatewayUnavailableError(`job list: ${res.status}`);
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
      if (res.status === 401 || res.status === 403) throw new GatewayAuthError(res.status);
      if (res.status !== 200) throw new GatewayUnavailableError(`job read: ${res.status}`);
      const parsed = Job.safeParse(jsonOf(res.text));
      if (!parsed.success) throw new GatewayUnavailableError('job read: unexpected body');
      return parsed.data;
    },
  };
}

import { describeAnswer, fetchBounded } from '@trawl/contracts';

/**
 * Records the original of a message the filter quarantines (issue 32) at the gateway
 * (POST /api/v1/quarantine, with the filter's own credential), so that an analyst can release it:
 * the gateway then asks this filter to deliver it (POST /internal/release, app.ts). Bounded by
 * `timeoutMs`; a failure is thrown (the filter answers 451: the message waits in Postfix's queue).
 */
export interface QuarantineRecorder {
  record(m: {
    messageRef: string;
    jobId: string | undefined;
    from: string;
    to: string[];
    raw: Buffer;
  }): Promise<void>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The Subject of a raw message (first one, unfolded, at most 998 characters), '' when none. */
function subjectOf(raw: Buffer): string {
  const head = raw.toString('latin1', 0, Math.min(raw.length, 256 * 1024));
  const end = head.search(/\r?\n\r?\n/);
  const block = (end < 0 ? head : head.slice(0, end)).replace(/\r?\n[ \t]/g, ' ');
  const line = block.split(/\r?\n/).find((l) => /^subject:/i.test(l));
  return line ? line.slice(8).trim().slice(0, 998) : '';
}

export function createQuarantineRecorder(o: {
  gatewayUrl: string;
  credential: string | undefined;
  timeoutMs: number;
}): QuarantineRecorder {
  const endpoint = new URL('/api/v1/quarantine', o.gatewayUrl).toString();
  return {
    async record(m) {
      // the gateway's answer: a status, and a short problem when it refuses (issue 28)
      const res = await fetchBounded(
        endpoint,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(o.credential ? { 'x-internal-api-key': o.credential } : {}),
          },
          body: JSON.stringify({
            message_ref: m.messageRef,
            ...(m.jobId && UUID.test(m.jobId) ? { job_id: m.jobId } : {}),
            envelope_from: m.from,
            recipients: m.to.slice(0, 1000),
            subject: subjectOf(m.raw),
            raw: m.raw.toString('base64'),
          }),
          redirect: 'error',
        },
        { maxBytes: 0, okOver: 'truncate', errorBytes: 4096, timeoutMs: o.timeoutMs },
      );
      if (res.status !== 201)
        throw new Error(`the gateway answered ${describeAnswer(res, 300).slice('HTTP '.length)}`);
    },
  };
}

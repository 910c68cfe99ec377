import {
  deriveCredential,
  describeAnswer,
  fetchBounded,
  type MailRetrievers,
  type PeerAnswer,
  type ReleaseRequest,
} from '@trawl/contracts';

/** Has retriever `retriever` (the SMTP filter that quarantined it) deliver a released message. */
export type ReleaseDelivery = (retriever: string, req: ReleaseRequest) => Promise<void>;

/** The filter could not deliver (unknown, unreachable, or its return port refused the message). */
class ReleaseDeliveryError extends Error {
  override name = 'ReleaseDeliveryError';
}

/**
 * POST <retriever url>/internal/release with the retriever's own credential (derived from the
 * platform key, as the mail orchestrator calls retrievers), bounded by `timeoutMs`; nothing of a
 * 2xx answer is read, and 4 KiB of any other (issue 28).
 */
export function createReleaseDelivery(
  retrievers: MailRetrievers,
  platformKey: string | undefined,
  timeoutMs = 60_000,
): ReleaseDelivery {
  return async (retriever, req) => {
    const entry = retrievers[retriever];
    if (!entry)
      throw new ReleaseDeliveryError(`retriever ${retriever} is not in TRAWL_MAIL_RETRIEVERS`);
    if (!platformKey) throw new ReleaseDeliveryError('INTERNAL_API_KEY is not set');
    let res: PeerAnswer;
    try {
      // the retriever's answer: a status and a short problem, read within bounds (issue 28)
      res = await fetchBounded(
        `${entry.url.replace(/\/$/, '')}/internal/release`,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-internal-api-key': deriveCredential(platformKey, {
              kind: 'retriever',
              id: retriever,
            }),
          },
          body: JSON.stringify(req),
          redirect: 'error',
        },
        { maxBytes: 0, okOver: 'truncate', errorBytes: 4096, timeoutMs },
      );
    } catch (err) {
      throw new ReleaseDeliveryError(
        `retriever ${retriever} unreachable: ${(err as Error).message}`,
      );
    }
    if (res.status >= 200 && res.status < 300) return;
    throw new ReleaseDeliveryError(
      `retriever ${retriever} answered ${describeAnswer(res, 300).slice('HTTP '.length)}`,
    );
  };
}

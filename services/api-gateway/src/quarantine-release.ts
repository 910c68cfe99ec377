import { deriveCredential, type MailRetrievers, type ReleaseRequest } from '@trawl/contracts';

/** Has retriever `retriever` (the SMTP filter that quarantined it) deliver a released message. */
export type ReleaseDelivery = (retriever: string, req: ReleaseRequest) => Promise<void>;

/** The filter could not deliver (unknown, unreachable, or its return port refused the message). */
class ReleaseDeliveryError extends Error {
  override name = 'ReleaseDeliveryError';
}

/**
 * POST <retriever url>/internal/release with the retriever's own credential (derived from the
 * platform key, as the mail orchestrator calls retrievers), bounded by `timeoutMs`; the answer's
 * body is read at most 64 KiB.
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
    let res: Response;
    try {
      res = await fetch(`${entry.url.replace(/\/$/, '')}/internal/release`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-internal-api-key': deriveCredential(platformKey, { kind: 'retriever', id: retriever }),
        },
        body: JSON.stringify(req),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw new ReleaseDeliveryError(
        `retriever ${retriever} unreachable: ${(err as Error).message}`,
      );
    }
    const text = (await res.text().catch(() => '')).slice(0, 64 * 1024);
    if (res.ok) return;
    throw new ReleaseDeliveryError(
      `retriever ${retriever} answered ${res.status}: ${text.slice(0, 300)}`,
    );
  };
}

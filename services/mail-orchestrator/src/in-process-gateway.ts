import { within } from '@trawl/platform';
import type { GatewayTransport } from './gateway-client.ts';

/** The slice of a Fastify app (the gateway's, in this process) a direct call needs. */
export interface InProcessGateway {
  inject(o: {
    method: 'GET' | 'POST';
    url: string;
    headers: Record<string, string>;
    payload?: Buffer;
  }): Promise<{ statusCode: number; headers: Record<string, unknown>; body: string }>;
}

/**
 * Requests to a gateway in the same process (embedded mode, ADR 021): through its own routes and
 * hooks (credentials, origin binding, limits, problem details: what a request over HTTP meets),
 * without a socket, the raw message handed over as the bytes it is. `host` is the Host header the
 * HTTP path would send (the gateway's address), so that TRUSTED_HOSTS judges both alike. A call
 * still unanswered at its timeout fails as an unanswered HTTP call does.
 */
export function inProcessTransport(gateway: InProcessGateway, host: string): GatewayTransport {
  return async (method, path, init) => {
    if (init.signal?.aborted) throw init.signal.reason ?? new Error('aborted');
    const res = await within(
      gateway.inject({
        method,
        url: path,
        headers: { ...init.headers, host },
        ...(init.body ? { payload: init.body } : {}),
      }),
      init.timeoutMs,
    );
    const headers = new Headers();
    for (const [k, v] of Object.entries(res.headers)) {
      if (typeof v === 'string' || typeof v === 'number') headers.set(k, String(v));
    }
    return { status: res.statusCode, headers, text: res.body };
  };
}

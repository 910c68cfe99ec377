import type { FastifyInstance } from 'fastify';

export interface ConformanceResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export interface ConformanceClient {
  request(
    method: 'GET' | 'POST',
    path: string,
    opts?: { headers?: Record<string, string>; body?: unknown },
  ): Promise<ConformanceResponse>;
}

function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Talks to an app in-process (`app.inject`). */
export function injectClient(app: FastifyInstance, basePath = ''): ConformanceClient {
  return {
    async request(method, path, opts = {}) {
      const res = await app.inject({
        method,
        url: basePath + path,
        headers: {
          ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...opts.headers,
        },
        ...(opts.body === undefined ? {} : { payload: JSON.stringify(opts.body) }),
      });
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) headers[k] = String(v);
      return { status: res.statusCode, headers, body: parseBody(res.body) };
    },
  };
}

/** Talks to a running service over HTTP; `baseUrl` is the plugin's base, e.g. `http://h:8100/llm`. */
export function httpClient(baseUrl: string): ConformanceClient {
  const base = baseUrl.replace(/\/+$/, '');
  return {
    async request(method, path, opts = {}) {
      const res = await fetch(base + path, {
        method,
        headers: {
          ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...opts.headers,
        },
        ...(opts.body === undefined ? {} : { body: JSON.stringify(opts.body) }),
      });
      const headers: Record<string, string> = {};
      res.headers.forEach((v, k) => {
        headers[k] = v;
      });
      return { status: res.status, headers, body: parseBody(await res.text()) };
    },
  };
}

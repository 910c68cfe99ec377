import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { errorText } from '@trawl/contracts';

/** The body of a test server's request (bounded: 30 MiB). */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const c of req) {
    total += (c as Buffer).length;
    if (total > 30 * 1024 * 1024) throw new Error('request body too large');
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks);
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, {
    ...(text ? { 'content-type': 'application/json' } : {}),
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

export interface TestHttpServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** An HTTP server on 127.0.0.1 and a free port, for the test kits (its handler's throws are 500s). */
export async function startTestHttpServer(
  handle: (req: IncomingMessage, res: ServerResponse, body: Buffer) => Promise<void> | void,
): Promise<TestHttpServer> {
  const server = createServer((req, res) => {
    readBody(req)
      .then((body) => handle(req, res, body))
      .catch((err: unknown) => {
        if (!res.headersSent) sendJson(res, 500, { error: errorText(err) });
        else res.destroy();
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

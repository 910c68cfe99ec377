import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small LLM server for tests, speaking Ollama `POST /api/chat` and OpenAI
 * `POST /v1/chat/completions`. The model name picks the behaviour:
 * `good` (a phishing verdict), `ham`, `fenced` (JSON inside a code fence), `badjson`, `wrongshape`,
 * `slow` (answers after 10 s), `error500`, `unknown-model` (404), `huge` (a 300 MB answer, streamed
 * as fast as it is read; `streamed` counts what was written), `error-page` (403 with an HTML page).
 */
export interface FakeLlm {
  url: string;
  requests: { path: string; body: Record<string, unknown>; authorization?: string }[];
  /** Bytes of `huge` answers written. */
  streamed: number;
  close(): Promise<void>;
}

const GOOD = {
  is_phishing: true,
  confidence: 0.91,
  threat_level: 'high',
  reasons: ['asks for the mailbox password', 'sender domain imitates the organisation'],
  summary: 'Credential phishing imitating IT support.',
};

function contentFor(model: string): string | undefined {
  switch (model) {
    case 'good':
      return JSON.stringify(GOOD);
    case 'ham':
      return JSON.stringify({
        is_phishing: false,
        confidence: 0.8,
        reasons: ['routine newsletter'],
      });
    case 'fenced':
      return `\`\`\`json\n${JSON.stringify(GOOD)}\n\`\`\``;
    case 'badjson':
      return 'Sure! This email looks like phishing because...';
    case 'wrongshape':
      return JSON.stringify({ verdict: 'phishing', score: 97 });
    default:
      return undefined;
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startFakeLlm(): Promise<FakeLlm> {
  const requests: FakeLlm['requests'] = [];
  const timers = new Set<NodeJS.Timeout>();
  const fake: FakeLlm = {
    url: '',
    requests,
    streamed: 0,
    close: () =>
      new Promise<void>((r) => {
        for (const t of timers) clearTimeout(t);
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  const server: Server = createServer(async (req, res) => {
    const body = JSON.parse((await readBody(req)) || '{}') as Record<string, unknown>;
    requests.push({
      path: req.url ?? '',
      body,
      ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
    });
    const model = String(body.model ?? '');
    const isOllama = req.url === '/api/chat';
    const isOpenAi = req.url === '/v1/chat/completions';
    if (req.method !== 'POST' || (!isOllama && !isOpenAi)) {
      res.writeHead(404).end('not found');
      return;
    }
    if (model === 'error500') {
      res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"boom"}');
      return;
    }
    if (model === 'error-page') {
      res
        .writeHead(403, { 'content-type': 'text/html' })
        .end('<html><body>Forbidden</body></html>');
      return;
    }
    if (model === 'huge') {
      const total = 300 * 1024 * 1024;
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      res.writeHead(200, { 'content-type': 'application/json' });
      let sent = 0;
      const pump = () => {
        while (sent < total && !res.destroyed) {
          sent += chunk.length;
          fake.streamed += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        if (!res.destroyed) res.end();
      };
      pump();
      return;
    }
    if (model === 'unknown-model') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"model not found"}');
      return;
    }
    const send = (content: string) => {
      const payload = isOllama
        ? { model, message: { role: 'assistant', content }, done: true, eval_count: 42 }
        : {
            id: 'x',
            object: 'chat.completion',
            choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 100, completion_tokens: 42 },
          };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
    };
    if (model === 'slow') {
      const t = setTimeout(() => {
        timers.delete(t);
        send(JSON.stringify(GOOD));
      }, 10_000);
      timers.add(t);
      return;
    }
    send(contentFor(model) ?? JSON.stringify(GOOD));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Job, type VerdictRequest, verifyCredential } from '@trawl/contracts';
import { emailId, parseRawEmail } from '@trawl/mail';

async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

function send(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export function rawMessage(
  n: number,
  opts: { messageId?: string | null; body?: string } = {},
): string {
  const mid = opts.messageId === undefined ? `<msg-${n}@example.test>` : opts.messageId;
  return [
    'From: Sender <sender@example.test>',
    'To: user@example.org',
    `Subject: Message ${n}`,
    ...(mid === null ? [] : [`Message-ID: ${mid}`]),
    'Date: Wed, 01 May 2024 10:00:00 +0000',
    '',
    opts.body ?? `Body of message ${n}.`,
    '',
  ].join('\r\n');
}

/** A retriever speaking the protocol, holding messages until acked. */
export class FakeRetriever {
  url = '';
  messages = new Map<string, { raw: string; envelope?: { to: string[] } }>();
  acked: string[] = [];
  fetches = 0;
  verdicts: VerdictRequest[] = [];
  keys: (string | undefined)[] = [];
  failFetch = 0;
  failVerdict = 0;
  private server = createServer((req, res) => void this.handle(req, res));

  add(id: string, raw: string | Buffer, envelope?: { to: string[] }): void {
    this.messages.set(id, {
      raw: Buffer.from(raw).toString('base64'),
      ...(envelope ? { envelope } : {}),
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const b = JSON.parse((await body(req)).toString() || '{}');
    this.keys.push(req.headers['x-internal-api-key'] as string | undefined);
    if (req.url === '/internal/fetch') {
      this.fetches++;
      if (this.failFetch > 0) {
        this.failFetch--;
        return send(res, 500, { error: 'boom' });
      }
      const messages = [...this.messages.entries()]
        .slice(0, b.max_messages)
        .map(([id, m]) => ({ id, ...m }));
      return send(res, 200, { messages });
    }
    if (req.url === '/internal/ack') {
      for (const id of b.ids as string[]) {
        this.acked.push(id);
        this.messages.delete(id);
      }
      return send(res, 200, { acked: b.ids.length });
    }
    if (req.url === '/internal/verdict') {
      if (this.failVerdict > 0) {
        this.failVerdict--;
        return send(res, 503, { error: 'later' });
      }
      this.verdicts.push(b);
      return send(res, 200, { ok: true });
    }
    send(res, 404, {});
  }

  async start(): Promise<this> {
    this.url = await listen(this.server);
    return this;
  }

  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }
}

/** The gateway's raw endpoint and job list, remembering what it was given. */
export class FakeGateway {
  url = '';
  jobs: (Job & {
    raw: string;
    origin: { retriever?: string; id?: string };
    envelopeTo?: string;
  })[] = [];
  unavailable = false;
  /** When set, every submission is answered with it (a refusal of the gateway's choosing). */
  refusal: { status: number; body: unknown } | undefined;
  submissions = 0;
  private server = createServer((req, res) => void this.handle(req, res));

  constructor(private readonly key: string) {}

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const b = await body(req);
    // As the gateway: a message only with its retriever's own credential, job reads only with the
    // mail orchestrator's; never the platform key itself.
    const presented = req.headers['x-internal-api-key'];
    const party = typeof presented === 'string' ? verifyCredential(this.key, presented) : null;
    if (!party) return send(res, 401, { code: 'auth' });
    const isRaw = req.method === 'POST' && req.url?.startsWith('/api/v1/analyze/raw');
    const allowed = isRaw
      ? party.kind === 'retriever' && party.id === req.headers['x-trawl-retriever']
      : party.kind === 'service' && party.id === 'mail-orchestrator';
    if (!allowed) return send(res, 403, { code: 'TRAWL_ERR_AUTH_NOT_RETRIEVER' });
    if (isRaw) {
      this.submissions++;
      if (this.unavailable) return send(res, 503, { code: 'TRAWL_ERR_BROKER_UNAVAILABLE' });
      if (this.refusal) return send(res, this.refusal.status, this.refusal.body);
      const raw = b.toString();
      if (raw.includes('UNPARSEABLE')) {
        return send(res, 422, {
          code: 'TRAWL_ERR_MAIL_UNPARSEABLE',
          detail: 'cannot parse',
          errors: [{ path: '', message: 'cannot parse' }],
        });
      }
      const job_id = randomUUID();
      const email_id = emailId(await parseRawEmail(b));
      this.jobs.unshift({
        job_id,
        email_id,
        status: 'queued',
        workflow: 'default',
        created_at: new Date().toISOString(),
        raw,
        origin: {
          retriever: req.headers['x-trawl-retriever'] as string,
          id: req.headers['x-trawl-message-id'] as string,
        },
        ...(typeof req.headers['x-trawl-envelope-to'] === 'string'
          ? { envelopeTo: req.headers['x-trawl-envelope-to'] }
          : {}),
      });
      return send(res, 200, {
        job_id,
        email_id,
        status: 'queued',
        workflow: 'default',
        message: 'queued',
      });
    }
    const one = req.method === 'GET' && /^\/api\/v1\/analyze\/[0-9a-f-]{36}$/.exec(req.url ?? '');
    if (one) {
      const job = this.jobs.find((j) => req.url?.endsWith(j.job_id));
      if (!job) return send(res, 404, {});
      const { raw: _r, origin: _o, envelopeTo: _e, ...j } = job;
      return send(res, 200, j);
    }
    if (req.method === 'GET' && req.url?.startsWith('/api/v1/analyze')) {
      const items = this.jobs.map(({ raw: _r, origin: _o, envelopeTo: _e, ...j }) => j);
      return send(res, 200, { items, next_cursor: null });
    }
    send(res, 404, {});
  }

  async start(): Promise<this> {
    this.url = await listen(this.server);
    return this;
  }

  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }
}

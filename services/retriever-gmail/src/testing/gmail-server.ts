import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson, startTestHttpServer, type TestTokenServer } from '@trawl/oauth/testing';

interface Label {
  id: string;
  name: string;
  type: 'system' | 'user';
}
interface Message {
  id: string;
  threadId: string;
  labels: Set<string>;
  raw: Buffer;
  messageId: string;
  historyId: number;
}
interface HistoryRecord {
  id: number;
  kind: 'messageAdded' | 'labelAdded' | 'labelRemoved';
  messageId: string;
  labelIds: string[];
}
interface Mailbox {
  address: string;
  labels: Map<string, Label>;
  messages: Map<string, Message>;
  history: HistoryRecord[];
  historyId: number;
  /** history ids below this one answer 404 (expired). */
  oldestValid: number;
}

export interface GmailServerStats {
  requests: number;
  throttled: number;
  byRoute: Record<string, number>;
}

export interface TestGmailServer {
  /** `<url>/gmail/v1` (TRAWL_GMAIL_URL). */
  gmailUrl: string;
  addMailbox(address: string): void;
  /** Delivers a message with the INBOX label; answers its id. */
  deliver(address: string, raw: Buffer | string): string;
  /** Message-ID → label names of every message carrying the label `name`. */
  labelled(address: string, name: string): Map<string, string[]>;
  /** The next `n` requests are throttled: 429 rateLimitExceeded, or 403 userRateLimitExceeded. */
  throttleNext(n: number, kind?: '429' | '403'): void;
  /** Each request is throttled with probability `p` until set to 0. */
  storm(p: number): void;
  /** Every history id given out so far answers 404 (a full sync is needed). */
  expireHistory(): void;
  stats: GmailServerStats;
  close(): Promise<void>;
}

const SYSTEM = ['INBOX', 'SPAM', 'TRASH', 'UNREAD', 'STARRED', 'IMPORTANT', 'SENT', 'DRAFT'];

function gmailError(
  res: ServerResponse,
  code: number,
  message: string,
  reason: string,
  status: string,
  domain = 'global',
) {
  sendJson(res, code, { error: { code, message, errors: [{ message, domain, reason }], status } });
}

function messageIdOf(raw: Buffer): string {
  const head = raw.subarray(0, 16_384).toString('latin1');
  return (
    /^Message-ID:[ \t]*(<[^>\r\n]{1,500}>)/im.exec(head)?.[1] ??
    `<${randomBytes(6).toString('hex')}@gmail.test>`
  );
}

/**
 * A local Gmail API (v1) of a few mailboxes, written from the published reference: users.getProfile,
 * messages.list (labelIds, pageToken), messages.get (format=raw as base64url, minimal),
 * messages.modify, users.history.list (startHistoryId, historyTypes, labelId, pageToken; 404 once
 * the id expired), labels.list and labels.create (409 when the name exists), bearer tokens checked
 * with the token server (a domain-wide delegation token only for its own subject), and quota
 * errors (429 rateLimitExceeded, 403 userRateLimitExceeded). Tests and benchmarks only.
 */
export async function startTestGmailServer(tokens: TestTokenServer): Promise<TestGmailServer> {
  const boxes = new Map<string, Mailbox>();
  const stats: GmailServerStats = { requests: 0, throttled: 0, byRoute: {} };
  let throttle: { n: number; kind: '429' | '403' } = { n: 0, kind: '429' };
  let stormP = 0;

  function record(b: Mailbox, kind: HistoryRecord['kind'], m: Message, labelIds: string[]) {
    b.historyId += 1 + Math.floor(Math.random() * 3); // ids increase with gaps, as documented
    m.historyId = b.historyId;
    b.history.push({ id: b.historyId, kind, messageId: m.id, labelIds });
  }

  function msgJson(m: Message, format: string) {
    return {
      id: m.id,
      threadId: m.threadId,
      labelIds: [...m.labels],
      historyId: String(m.historyId),
      sizeEstimate: m.raw.length,
      ...(format === 'raw' ? { raw: m.raw.toString('base64url') } : {}),
    };
  }

  function handle(req: IncomingMessage, res: ServerResponse, body: Buffer) {
    stats.requests += 1;
    const url = new URL(req.url ?? '/', 'http://x');
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    if (parts[0] !== 'gmail' || parts[1] !== 'v1' || parts[2] !== 'users' || !parts[3])
      return gmailError(res, 404, 'Not Found', 'notFound', 'NOT_FOUND');
    const rest = parts.slice(4);
    const route = `${req.method} ${rest.map((p, i) => (i % 2 === 1 ? '{id}' : p)).join('/')}`;
    stats.byRoute[route] = (stats.byRoute[route] ?? 0) + 1;
    const granted = tokens.validate((req.headers.authorization ?? '').replace(/^Bearer /, ''));
    if (!granted)
      return gmailError(
        res,
        401,
        'Request had invalid authentication credentials. Expected OAuth 2 access token.',
        'authError',
        'UNAUTHENTICATED',
      );
    const user = parts[3] === 'me' ? (granted.subject ?? '') : parts[3].toLowerCase();
    if (granted.subject?.toLowerCase() !== user)
      return gmailError(
        res,
        403,
        `Delegation denied for ${granted.client}`,
        'forbidden',
        'PERMISSION_DENIED',
      );
    if (
      !granted.scope
        .split(' ')
        .some((s) => s.endsWith('/gmail.modify') || s === 'https://mail.google.com/')
    )
      return gmailError(
        res,
        403,
        'Request had insufficient authentication scopes.',
        'insufficientPermissions',
        'PERMISSION_DENIED',
      );
    const b = boxes.get(user);
    if (!b)
      return gmailError(
        res,
        400,
        'Mail service not enabled',
        'failedPrecondition',
        'FAILED_PRECONDITION',
      );
    if (throttle.n > 0 || (stormP > 0 && Math.random() < stormP)) {
      const kind = throttle.n > 0 ? throttle.kind : Math.random() < 0.5 ? '429' : '403';
      if (throttle.n > 0) throttle.n -= 1;
      stats.throttled += 1;
      return kind === '429'
        ? gmailError(
            res,
            429,
            'Too many concurrent requests for user.',
            'rateLimitExceeded',
            'RESOURCE_EXHAUSTED',
            'usageLimits',
          )
        : gmailError(
            res,
            403,
            'User Rate Limit Exceeded',
            'userRateLimitExceeded',
            'PERMISSION_DENIED',
            'usageLimits',
          );
    }
    const json = () =>
      body.length ? (JSON.parse(body.toString('utf8')) as Record<string, unknown>) : {};
    const q = url.searchParams;
    const max = Math.min(500, Number(q.get('maxResults') ?? 100));

    if (rest[0] === 'profile' && req.method === 'GET')
      return sendJson(res, 200, {
        emailAddress: b.address,
        messagesTotal: b.messages.size,
        threadsTotal: b.messages.size,
        historyId: String(b.historyId),
      });
    if (rest[0] === 'labels' && !rest[1]) {
      if (req.method === 'GET') return sendJson(res, 200, { labels: [...b.labels.values()] });
      if (req.method === 'POST') {
        const name = String(json().name ?? '');
        if ([...b.labels.values()].some((l) => l.name.toLowerCase() === name.toLowerCase()))
          return gmailError(
            res,
            409,
            'Label name exists or conflicts',
            'duplicate',
            'ALREADY_EXISTS',
          );
        const l: Label = { id: `Label_${randomBytes(6).toString('hex')}`, name, type: 'user' };
        b.labels.set(l.id, l);
        return sendJson(res, 200, {
          ...l,
          labelListVisibility: 'labelShow',
          messageListVisibility: 'show',
        });
      }
    }
    if (rest[0] === 'messages' && !rest[1] && req.method === 'GET') {
      const labelIds = q.getAll('labelIds');
      const all = [...b.messages.values()]
        .filter((m) => labelIds.every((l) => m.labels.has(l)))
        .sort((x, y) => Number(y.id.slice(1)) - Number(x.id.slice(1))); // newest first
      // A page token stands for the last message given (ids sort newest first), not an offset:
      // a page asked again after messages left the label still gives the ones after it.
      const after = q.get('pageToken');
      const rest = after ? all.filter((m) => m.id < after) : all;
      const page = rest.slice(0, max);
      return sendJson(res, 200, {
        messages: page.map((m) => ({ id: m.id, threadId: m.threadId })),
        ...(rest.length > max ? { nextPageToken: (page.at(-1) as Message).id } : {}),
        resultSizeEstimate: all.length,
      });
    }
    if (rest[0] === 'messages' && rest[1]) {
      const m = b.messages.get(rest[1]);
      if (!m)
        return gmailError(res, 404, 'Requested entity was not found.', 'notFound', 'NOT_FOUND');
      if (!rest[2] && req.method === 'GET')
        return sendJson(res, 200, msgJson(m, q.get('format') ?? 'full'));
      if (rest[2] === 'modify' && req.method === 'POST') {
        const p = json();
        const add = (p.addLabelIds as string[] | undefined) ?? [];
        const remove = (p.removeLabelIds as string[] | undefined) ?? [];
        for (const l of [...add, ...remove])
          if (!b.labels.has(l))
            return gmailError(
              res,
              400,
              `Invalid label: ${l}`,
              'invalidArgument',
              'INVALID_ARGUMENT',
            );
        const added = add.filter((l) => !m.labels.has(l));
        const removed = remove.filter((l) => m.labels.has(l));
        for (const l of added) m.labels.add(l);
        for (const l of removed) m.labels.delete(l);
        if (added.length) record(b, 'labelAdded', m, added);
        if (removed.length) record(b, 'labelRemoved', m, removed);
        return sendJson(res, 200, msgJson(m, 'minimal'));
      }
    }
    if (rest[0] === 'history' && req.method === 'GET') {
      const start = Number(q.get('startHistoryId'));
      if (!Number.isFinite(start) || start < b.oldestValid || start > b.historyId)
        return gmailError(res, 404, 'Requested entity was not found.', 'notFound', 'NOT_FOUND');
      const types = q.getAll('historyTypes');
      const label = q.get('labelId');
      const recs = b.history.filter(
        (h) =>
          h.id > start &&
          (types.length === 0 || types.includes(h.kind)) &&
          (!label || b.messages.get(h.messageId)?.labels.has(label) || h.labelIds.includes(label)),
      );
      const after = Number(q.get('pageToken') ?? 0);
      const rest = recs.filter((h) => h.id > after);
      const page = rest.slice(0, max);
      return sendJson(res, 200, {
        history: page.map((h) => {
          const m = b.messages.get(h.messageId);
          const message = {
            id: h.messageId,
            threadId: m?.threadId ?? h.messageId,
            labelIds: h.labelIds,
          };
          return {
            id: String(h.id),
            messages: [message],
            ...(h.kind === 'messageAdded' ? { messagesAdded: [{ message }] } : {}),
            ...(h.kind === 'labelAdded'
              ? { labelsAdded: [{ message, labelIds: h.labelIds }] }
              : {}),
            ...(h.kind === 'labelRemoved'
              ? { labelsRemoved: [{ message, labelIds: h.labelIds }] }
              : {}),
          };
        }),
        ...(rest.length > max ? { nextPageToken: String((page.at(-1) as HistoryRecord).id) } : {}),
        historyId: String(b.historyId),
      });
    }
    gmailError(
      res,
      400,
      `Unsupported ${req.method} ${url.pathname}`,
      'badRequest',
      'INVALID_ARGUMENT',
    );
  }

  const http = await startTestHttpServer(async (req, res, body) => {
    await new Promise((r) => setImmediate(r));
    handle(req, res, body);
  });
  let seq = 0;

  return {
    gmailUrl: `${http.url}/gmail/v1`,
    addMailbox(address) {
      const labels = new Map<string, Label>(
        SYSTEM.map((id) => [id, { id, name: id, type: 'system' }]),
      );
      boxes.set(address.toLowerCase(), {
        address,
        labels,
        messages: new Map(),
        history: [],
        historyId: 1000 + Math.floor(Math.random() * 1000),
        oldestValid: 0,
      });
    },
    deliver(address, raw) {
      const b = boxes.get(address.toLowerCase());
      if (!b) throw new Error(`no mailbox ${address}`);
      const buf = Buffer.isBuffer(raw) ? raw : Buffer.from(raw);
      seq += 1;
      const m: Message = {
        id: `m${String(seq).padStart(8, '0')}`,
        threadId: `t${seq}`,
        labels: new Set(['INBOX', 'UNREAD']),
        raw: buf,
        messageId: messageIdOf(buf),
        historyId: 0,
      };
      b.messages.set(m.id, m);
      record(b, 'messageAdded', m, [...m.labels]);
      return m.id;
    },
    labelled(address, name) {
      const b = boxes.get(address.toLowerCase());
      const out = new Map<string, string[]>();
      if (!b) return out;
      const label = [...b.labels.values()].find((l) => l.name === name);
      if (!label) return out;
      for (const m of b.messages.values())
        if (m.labels.has(label.id))
          out.set(m.messageId, [...m.labels].map((id) => b.labels.get(id)?.name ?? id).sort());
      return out;
    },
    throttleNext(n, kind = '429') {
      throttle = { n, kind };
    },
    storm(p) {
      stormP = p;
    },
    expireHistory() {
      for (const b of boxes.values()) {
        b.historyId += 1;
        b.oldestValid = b.historyId;
      }
    },
    stats,
    close: () => http.close(),
  };
}

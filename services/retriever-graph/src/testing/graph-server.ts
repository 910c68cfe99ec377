import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson, startTestHttpServer, type TestTokenServer } from '@trawl/oauth/testing';

interface Folder {
  id: string;
  displayName: string;
  parentId: string | null;
}
interface Message {
  id: string;
  folderId: string;
  mime: Buffer;
  internetMessageId: string;
  categories: string[];
  flagStatus: 'notFlagged' | 'flagged';
  /** Sequence of its last change (created, updated, moved in). */
  seq: number;
}
interface Mailbox {
  folders: Map<string, Folder>;
  messages: Map<string, Message>;
  /** folder id → (message id → sequence it left the folder). */
  left: Map<string, Map<string, number>>;
  inFlight: number;
}

export interface GraphServerStats {
  requests: number;
  throttled: number;
  byRoute: Record<string, number>;
  /** Most requests in flight at once for one mailbox. */
  maxConcurrency: number;
}

export interface TestGraphServer {
  /** Base URL of the API, `<url>/v1.0` (TRAWL_GRAPH_URL). */
  graphUrl: string;
  addMailbox(address: string): void;
  /** Delivers a message to the mailbox's Inbox; answers its id. */
  deliver(address: string, mime: Buffer | string): string;
  /** Messages in a folder (a path under the root, '/' between levels; `Inbox`). */
  folder(
    address: string,
    path: string,
  ): { internetMessageId: string; categories: string[]; flagged: boolean; id: string }[];
  /** Which app ids may reach which mailboxes (New-ApplicationAccessPolicy RestrictAccess). */
  restrictAccess(clientId: string, mailboxes: string[] | null): void;
  /** The next `n` requests answer 429 with Retry-After `seconds`. */
  throttleNext(n: number, seconds?: number): void;
  /** Each request answers 429 with probability `p` (a storm), until set to 0. */
  storm(p: number, seconds?: number): void;
  /** Delta tokens minted so far answer 410 syncStateNotFound (the service dropped its state). */
  expireDeltaTokens(): void;
  stats: GraphServerStats;
  close(): Promise<void>;
}

function graphError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers = {},
) {
  sendJson(
    res,
    status,
    {
      error: {
        code,
        message,
        innerError: {
          date: new Date().toISOString(),
          'request-id': randomBytes(8).toString('hex'),
        },
      },
    },
    headers,
  );
}

function newId(): string {
  return `AAMk${randomBytes(30).toString('base64url')}`;
}

function messageIdOf(mime: Buffer): string {
  const head = mime.subarray(0, 16_384).toString('latin1');
  const m = /^Message-ID:[ \t]*(<[^>\r\n]{1,500}>)/im.exec(head);
  return m?.[1] ?? `<${randomBytes(8).toString('hex')}@graph.test>`;
}

function toJson(m: Message, select: string[] | null) {
  const all: Record<string, unknown> = {
    id: m.id,
    parentFolderId: m.folderId,
    internetMessageId: m.internetMessageId,
    categories: m.categories,
    flag: { flagStatus: m.flagStatus },
  };
  if (!select) return all;
  return Object.fromEntries(Object.entries(all).filter(([k]) => k === 'id' || select.includes(k)));
}

interface DeltaState {
  /** Changes after this sequence belong to the round. */
  since: number;
  /** The round covers changes up to this sequence. */
  upto: number;
  /** The sequence the next page starts after. */
  offset: number;
  folder: string;
  mailbox: string;
  /** The token generation it was minted in (expireDeltaTokens starts a new one). */
  minted: number;
}

/**
 * A local Microsoft Graph (v1.0) of a few mailboxes, written from the published reference: the
 * message delta of a folder (`@odata.nextLink` / `@odata.deltaLink`, `Prefer: odata.maxpagesize`,
 * `@removed`, 410 syncStateNotFound), `$value` MIME, `move` (a new id unless `Prefer:
 * IdType="ImmutableId"`), PATCH of categories and flag, mail folders and child folders with
 * `$filter=displayName eq '…'`, bearer tokens checked with the token server, application access
 * policies (403 ErrorAccessDenied), and throttling (429 + Retry-After; more than 4 concurrent
 * requests on one mailbox is MailboxConcurrency). Tests and benchmarks only.
 */
export async function startTestGraphServer(tokens: TestTokenServer): Promise<TestGraphServer> {
  const mailboxes = new Map<string, Mailbox>();
  const policies = new Map<string, Set<string>>();
  const stats: GraphServerStats = { requests: 0, throttled: 0, byRoute: {}, maxConcurrency: 0 };
  let seq = 0;
  let generation = 0;
  let throttle = { n: 0, seconds: 1 };
  let stormP = 0;
  let stormSeconds = 1;
  let base = '';

  function box(address: string): Mailbox {
    const b = mailboxes.get(address.toLowerCase());
    if (!b) throw new Error(`no mailbox ${address}`);
    return b;
  }

  function wellKnown(b: Mailbox, idOrName: string): Folder | undefined {
    const lower = idOrName.toLowerCase();
    for (const f of b.folders.values()) {
      if (f.id === idOrName) return f;
      if (lower === 'inbox' && f.displayName === 'Inbox' && f.parentId === 'root') return f;
      if (lower === 'msgfolderroot' && f.id === 'root') return f;
    }
    return undefined;
  }

  const encodeToken = (s: DeltaState) => Buffer.from(JSON.stringify(s)).toString('base64url');
  const decodeToken = (t: string): DeltaState | null => {
    try {
      return JSON.parse(Buffer.from(t, 'base64url').toString('utf8')) as DeltaState;
    } catch {
      return null;
    }
  };

  function delta(
    res: ServerResponse,
    b: Mailbox,
    address: string,
    folder: Folder,
    url: URL,
    prefer: string,
  ) {
    const pageSize = Number(/odata\.maxpagesize=(\d+)/.exec(prefer)?.[1] ?? 10);
    const skip = url.searchParams.get('$skiptoken');
    const dtoken = url.searchParams.get('$deltatoken');
    let st: DeltaState;
    if (skip || dtoken) {
      const t = decodeToken((skip ?? dtoken) as string);
      if (!t || t.folder !== folder.id || t.mailbox !== address)
        return graphError(res, 400, 'BadRequest', 'Invalid delta token.');
      if (t.minted < generation)
        return graphError(
          res,
          410,
          'SyncStateNotFound',
          'The sync state generation is not found. The delta token is expired and data must be synchronized again.',
        );
      st = skip ? t : { ...t, since: t.upto, upto: seq, offset: t.upto };
    } else {
      st = {
        since: 0,
        upto: seq,
        offset: 0,
        folder: folder.id,
        mailbox: address,
        minted: generation,
      };
    }
    // Pages continue after the last change they gave (what a skip token stands for), so a page
    // asked again after its messages moved out still gives the ones after them.
    const entries: { seq: number; json: unknown }[] = [...b.messages.values()]
      .filter((m) => m.folderId === folder.id && m.seq > st.offset && m.seq <= st.upto)
      .map((m) => ({ seq: m.seq, json: toJson(m, ['internetMessageId', 'parentFolderId']) }));
    if (st.since > 0)
      for (const [id, at] of b.left.get(folder.id) ?? new Map<string, number>())
        if (at > st.offset && at <= st.upto && b.messages.get(id)?.folderId !== folder.id)
          entries.push({ seq: at, json: { id, '@removed': { reason: 'deleted' } } });
    entries.sort((x, y) => x.seq - y.seq);
    const page = entries.slice(0, pageSize);
    const more = entries.length > pageSize;
    const link = `${base}/v1.0/users/${encodeURIComponent(address)}/mailFolders/${folder.id}/messages/delta`;
    const body: Record<string, unknown> = {
      '@odata.context': `${base}/v1.0/$metadata#Collection(message)`,
      value: page.map((e) => e.json),
    };
    const after = page.at(-1)?.seq ?? st.offset;
    if (more)
      body['@odata.nextLink'] =
        `${link}?$skiptoken=${encodeToken({ ...st, offset: after, minted: generation })}`;
    else
      body['@odata.deltaLink'] =
        `${link}?$deltatoken=${encodeToken({ ...st, minted: generation })}`;
    sendJson(res, 200, body);
  }

  function findChild(b: Mailbox, parentId: string, name: string): Folder | undefined {
    for (const f of b.folders.values())
      if (f.parentId === parentId && f.displayName.toLowerCase() === name.toLowerCase()) return f;
    return undefined;
  }

  function moveMessage(b: Mailbox, m: Message, destId: string, immutable: boolean): Message {
    if (m.folderId === destId) return m;
    const leftMap = b.left.get(m.folderId) ?? new Map<string, number>();
    b.left.set(m.folderId, leftMap);
    seq += 1;
    b.messages.delete(m.id);
    const moved: Message = { ...m, folderId: destId, seq, id: immutable ? m.id : newId() };
    leftMap.set(m.id, seq);
    b.messages.set(moved.id, moved);
    return moved;
  }

  function handle(req: IncomingMessage, res: ServerResponse, body: Buffer) {
    stats.requests += 1;
    const url = new URL(req.url ?? '/', base);
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    // /v1.0/users/{u}/...
    if (parts[0] !== 'v1.0' || parts[1] !== 'users' || !parts[2])
      return graphError(res, 404, 'ResourceNotFound', 'Resource not found.');
    const address = parts[2].toLowerCase();
    const rest = parts.slice(3);
    const route = `${req.method} ${rest.map((p, i) => (i % 2 === 1 ? '{id}' : p)).join('/')}`;
    stats.byRoute[route] = (stats.byRoute[route] ?? 0) + 1;

    const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    const granted = tokens.validate(token);
    if (!granted)
      return graphError(
        res,
        401,
        'InvalidAuthenticationToken',
        'Access token has expired or is not yet valid.',
        {
          'www-authenticate': 'Bearer',
        },
      );
    const policy = policies.get(granted.client);
    if (policy && !policy.has(address))
      return graphError(
        res,
        403,
        'ErrorAccessDenied',
        'Access to OData is disabled: [RAOP] : Blocked by tenant configured AppOnly AccessPolicy settings.',
      );
    const b = mailboxes.get(address);
    if (!b)
      return graphError(
        res,
        404,
        'ErrorInvalidUser',
        `The requested user '${address}' is invalid.`,
      );

    if (throttle.n > 0 || (stormP > 0 && Math.random() < stormP)) {
      const seconds = throttle.n > 0 ? throttle.seconds : stormSeconds;
      if (throttle.n > 0) throttle.n -= 1;
      stats.throttled += 1;
      return graphError(res, 429, 'TooManyRequests', 'Please retry again later.', {
        'retry-after': String(seconds),
      });
    }
    if (b.inFlight > 4) {
      stats.throttled += 1;
      return graphError(
        res,
        429,
        'ApplicationThrottled',
        'Application is over its MailboxConcurrency limit.',
        {
          'retry-after': '1',
        },
      );
    }

    const prefer = String(req.headers.prefer ?? '');
    const immutable = /IdType="ImmutableId"/i.test(prefer);
    const json = () =>
      body.length ? (JSON.parse(body.toString('utf8')) as Record<string, unknown>) : {};
    const select = url.searchParams.get('$select')?.split(',') ?? null;
    const filterName = /^displayName eq '((?:[^']|'')*)'$/
      .exec(url.searchParams.get('$filter') ?? '')?.[1]
      ?.replace(/''/g, "'");

    // mailFolders
    if (rest[0] === 'mailFolders') {
      const f = rest[1] ? wellKnown(b, rest[1]) : undefined;
      if (rest[1] && !f)
        return graphError(
          res,
          404,
          'ErrorItemNotFound',
          'The specified object was not found in the store.',
        );
      if (f && rest[2] === 'messages' && rest[3] === 'delta' && req.method === 'GET')
        return delta(res, b, address, f, url, prefer);
      const parent = rest.length === 1 ? 'root' : rest[2] === 'childFolders' && f ? f.id : null;
      if (parent && req.method === 'GET') {
        const value = [...b.folders.values()]
          .filter(
            (x) =>
              x.parentId === parent &&
              (!filterName || x.displayName.toLowerCase() === filterName.toLowerCase()),
          )
          .map((x) => ({ id: x.id, displayName: x.displayName, parentFolderId: x.parentId }));
        return sendJson(res, 200, { value });
      }
      if (parent && req.method === 'POST') {
        const name = String(json().displayName ?? '');
        if (!name) return graphError(res, 400, 'ErrorInvalidRequest', 'displayName is required.');
        if (findChild(b, parent, name))
          return graphError(
            res,
            409,
            'ErrorFolderExists',
            'A folder with the specified name already exists.',
          );
        const nf: Folder = { id: newId(), displayName: name, parentId: parent };
        b.folders.set(nf.id, nf);
        return sendJson(res, 201, {
          id: nf.id,
          displayName: nf.displayName,
          parentFolderId: parent,
        });
      }
      if (f && rest.length === 2 && req.method === 'GET')
        return sendJson(res, 200, {
          id: f.id,
          displayName: f.displayName,
          parentFolderId: f.parentId,
        });
    }

    if (rest[0] === 'messages' && rest[1]) {
      const m = b.messages.get(rest[1]);
      if (!m)
        return graphError(
          res,
          404,
          'ErrorItemNotFound',
          'The specified object was not found in the store.',
        );
      if (rest[2] === '$value' && req.method === 'GET') {
        res.writeHead(200, {
          'content-type': 'text/plain',
          'content-length': String(m.mime.length),
        });
        return res.end(m.mime);
      }
      if (rest[2] === 'move' && req.method === 'POST') {
        const dest = wellKnown(b, String(json().destinationId ?? ''));
        if (!dest) return graphError(res, 400, 'ErrorInvalidIdMalformed', 'Id is malformed.');
        return sendJson(res, 201, toJson(moveMessage(b, m, dest.id, immutable), null));
      }
      if (rest.length === 2 && req.method === 'GET') return sendJson(res, 200, toJson(m, select));
      if (rest.length === 2 && req.method === 'PATCH') {
        const patch = json();
        if (Array.isArray(patch.categories)) m.categories = patch.categories.map(String);
        const flag = patch.flag as { flagStatus?: string } | undefined;
        if (flag?.flagStatus === 'flagged' || flag?.flagStatus === 'notFlagged')
          m.flagStatus = flag.flagStatus;
        seq += 1;
        m.seq = seq;
        return sendJson(res, 200, toJson(m, null));
      }
    }
    graphError(res, 400, 'BadRequest', `Unsupported request ${req.method} ${url.pathname}`);
  }

  const http = await startTestHttpServer(async (req, res, body) => {
    const address = decodeURIComponent(
      new URL(req.url ?? '/', 'http://x').pathname.split('/')[3] ?? '',
    ).toLowerCase();
    const b = mailboxes.get(address);
    if (b) {
      b.inFlight += 1;
      stats.maxConcurrency = Math.max(stats.maxConcurrency, b.inFlight);
    }
    try {
      // Let concurrent requests overlap as they would at a remote server.
      await new Promise((r) => setImmediate(r));
      handle(req, res, body);
    } finally {
      if (b) b.inFlight -= 1;
    }
  });
  base = http.url;

  function folderByPath(b: Mailbox, path: string): Folder | undefined {
    let parent = 'root';
    let f: Folder | undefined;
    for (const name of path.split('/').filter(Boolean)) {
      f = findChild(b, parent, name);
      if (!f) return undefined;
      parent = f.id;
    }
    return f;
  }

  return {
    graphUrl: `${http.url}/v1.0`,
    addMailbox(address) {
      const folders = new Map<string, Folder>();
      folders.set('root', { id: 'root', displayName: 'Top of Information Store', parentId: null });
      for (const name of ['Inbox', 'Archive', 'Deleted Items']) {
        const id = newId();
        folders.set(id, { id, displayName: name, parentId: 'root' });
      }
      mailboxes.set(address.toLowerCase(), {
        folders,
        messages: new Map(),
        left: new Map(),
        inFlight: 0,
      });
    },
    deliver(address, mime) {
      const b = box(address);
      const inbox = wellKnown(b, 'inbox') as Folder;
      const buf = Buffer.isBuffer(mime) ? mime : Buffer.from(mime);
      seq += 1;
      const m: Message = {
        id: newId(),
        folderId: inbox.id,
        mime: buf,
        internetMessageId: messageIdOf(buf),
        categories: [],
        flagStatus: 'notFlagged',
        seq,
      };
      b.messages.set(m.id, m);
      return m.id;
    },
    folder(address, path) {
      const b = box(address);
      const f = folderByPath(b, path);
      if (!f) return [];
      return [...b.messages.values()]
        .filter((m) => m.folderId === f.id)
        .map((m) => ({
          id: m.id,
          internetMessageId: m.internetMessageId,
          categories: m.categories,
          flagged: m.flagStatus === 'flagged',
        }));
    },
    restrictAccess(clientId, list) {
      if (list === null) policies.delete(clientId);
      else policies.set(clientId, new Set(list.map((a) => a.toLowerCase())));
    },
    throttleNext(n, seconds = 1) {
      throttle = { n, seconds };
    },
    storm(p, seconds = 1) {
      stormP = p;
      stormSeconds = seconds;
    },
    expireDeltaTokens() {
      generation += 1;
    },
    stats,
    close: () => http.close(),
  };
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson, startTestHttpServer, type TestTokenServer } from '@trawl/oauth/testing';
import { delta } from './graph-delta.ts';
import {
  type Folder,
  findChild,
  folderByPath,
  type GraphState,
  graphError,
  type Mailbox,
  type Message,
  messageIdOf,
  moveMessage,
  newId,
  toJson,
  wellKnown,
} from './graph-mailbox.ts';

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
  const state: GraphState = { seq: 0, generation: 0, base: '' };
  let throttle = { n: 0, seconds: 1 };
  let stormP = 0;
  let stormSeconds = 1;

  function box(address: string): Mailbox {
    const b = mailboxes.get(address.toLowerCase());
    if (!b) throw new Error(`no mailbox ${address}`);
    return b;
  }

  function handle(req: IncomingMessage, res: ServerResponse, body: Buffer) {
    stats.requests += 1;
    const url = new URL(req.url ?? '/', state.base);
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
        return delta(state, res, b, address, f, url, prefer);
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
        return sendJson(res, 201, toJson(moveMessage(state, b, m, dest.id, immutable), null));
      }
      if (rest.length === 2 && req.method === 'GET') return sendJson(res, 200, toJson(m, select));
      if (rest.length === 2 && req.method === 'PATCH') {
        const patch = json();
        if (Array.isArray(patch.categories)) m.categories = patch.categories.map(String);
        const flag = patch.flag as { flagStatus?: string } | undefined;
        if (flag?.flagStatus === 'flagged' || flag?.flagStatus === 'notFlagged')
          m.flagStatus = flag.flagStatus;
        state.seq += 1;
        m.seq = state.seq;
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
  state.base = http.url;

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
      state.seq += 1;
      const m: Message = {
        id: newId(),
        folderId: inbox.id,
        mime: buf,
        internetMessageId: messageIdOf(buf),
        categories: [],
        flagStatus: 'notFlagged',
        seq: state.seq,
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
      state.generation += 1;
    },
    stats,
    close: () => http.close(),
  };
}

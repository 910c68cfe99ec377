import { PeerAnswerError, readBounded } from '@trawl/contracts';
import {
  type CredentialsFile,
  normaliseUrl,
  readCredentials,
  type Session,
  writeCredentials,
} from './credentials.ts';
import { CLI_ERRORS, CliError } from './errors.ts';
import { EXIT } from './exit-codes.ts';

/** Options of one CLI request: query, JSON or raw body, anonymous, signal. */
export interface RequestOptions {
  query?: Record<string, string | number | undefined>;
  json?: unknown;
  /** A raw body with its content type (e.g. message/rfc822). */
  raw?: { body: Uint8Array; contentType: string };
  form?: Record<string, string>;
  /** Send no token (login). */
  anonymous?: boolean;
  signal?: AbortSignal;
}

/** Where and as whom the CLI talks to the gateway. */
export interface ApiClientOptions {
  /** Base URL of the server (its root, e.g. http://127.0.0.1:8001). */
  url: string;
  credentialsPath: string;
  fetch?: typeof fetch;
  /** Wall clock (ms), for token expiry. */
  now?: () => number;
  /** Largest answer read (default 256 MiB); a larger one is an error, the rest unread. */
  maxAnswerBytes?: number;
}

/** Largest answer the CLI reads from the server (a page of jobs or search results is far less). */
const MAX_ANSWER_BYTES = 256 * 1024 * 1024;

function problemText(status: number, body: unknown): string {
  if (body && typeof body === 'object') {
    const p = body as { title?: unknown; detail?: unknown; errors?: unknown; code?: unknown };
    const head = [p.title, p.detail].filter((x) => typeof x === 'string' && x !== '').join(': ');
    const errs = Array.isArray(p.errors)
      ? p.errors
          .slice(0, 10)
          .map(
            (e: { path?: unknown; message?: unknown }) =>
              `\n  - ${typeof e.path === 'string' && e.path ? `${e.path}: ` : ''}${String(e.message)}`,
          )
          .join('')
      : '';
    if (head) return `${head}${typeof p.code === 'string' ? ` (${p.code})` : ''}${errs}`;
  }
  return `the server answered ${status}`;
}

/**
 * The HTTP side of the CLI: adds the bearer token, refreshes it once on 401 (or shortly before it
 * expires) with the stored refresh token, and turns problem details into CliErrors.
 */
export class ApiClient {
  readonly url: string;
  private readonly path: string;
  private readonly fetchFn: typeof fetch;
  private readonly now: () => number;
  private readonly maxAnswerBytes: number;

  constructor(o: ApiClientOptions) {
    this.url = normaliseUrl(o.url);
    this.path = o.credentialsPath;
    this.fetchFn = o.fetch ?? fetch;
    this.maxAnswerBytes = o.maxAnswerBytes ?? MAX_ANSWER_BYTES;
    this.now = o.now ?? Date.now;
  }

  session(): Session | undefined {
    return readCredentials(this.path).sessions[this.url];
  }

  saveSession(s: Session): void {
    const file: CredentialsFile = readCredentials(this.path);
    file.sessions[this.url] = s;
    file.current = this.url;
    writeCredentials(this.path, file);
  }

  /** POST /auth/token (password grant); stores the session. */
  async login(username: string, password: string): Promise<Session> {
    const body = await this.request<TokenAnswer>('POST', '/auth/token', {
      form: { grant_type: 'password', username, password },
      anonymous: true,
    });
    const s = this.toSession(username, body);
    this.saveSession(s);
    return s;
  }

  private toSession(username: string, t: TokenAnswer): Session {
    return {
      url: this.url,
      username,
      access_token: t.access_token,
      ...(t.refresh_token ? { refresh_token: t.refresh_token } : {}),
      ...(typeof t.expires_in === 'number' ? { expires_at: this.now() + t.expires_in * 1000 } : {}),
    };
  }

  private async refresh(s: Session): Promise<Session | undefined> {
    if (!s.refresh_token) return undefined;
    let res: Response;
    try {
      res = await this.fetchFn(`${this.url}/auth/refresh`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: new URLSearchParams({ refresh_token: s.refresh_token }).toString(),
      });
    } catch (err) {
      throw this.unreachable(err);
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      return undefined;
    }
    const answer = await readBounded(res.body, { maxBytes: 64 * 1024 }).catch(() => undefined);
    if (!answer) return undefined;
    const next = this.toSession(
      s.username,
      JSON.parse(answer.bytes.toString('utf8')) as TokenAnswer,
    );
    this.saveSession(next);
    return next;
  }

  private unreachable(err: unknown): CliError {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    return new CliError(
      CLI_ERRORS.unreachable,
      `cannot reach ${this.url}${cause ? ` (${cause})` : ''}: is Trawl running? (pnpm start)`,
      EXIT.error,
      { cause: err },
    );
  }

  /** Sends a request; answers the parsed JSON body, or throws a CliError. */
  async request<T = unknown>(method: string, path: string, o: RequestOptions = {}): Promise<T> {
    let session = o.anonymous ? undefined : this.session();
    if (!o.anonymous && !session) {
      throw new CliError(
        CLI_ERRORS.notLoggedIn,
        `not logged in to ${this.url}: run \`trawl login --url ${this.url}\``,
        EXIT.auth,
      );
    }
    // Refresh a token that expires within 30 s rather than fail a request with it.
    if (session?.expires_at !== undefined && session.expires_at - this.now() < 30_000) {
      session = (await this.refresh(session)) ?? session;
    }
    let res = await this.send(method, path, o, session);
    if (res.status === 401 && session) {
      const next = await this.refresh(session);
      if (next) res = await this.send(method, path, o, next);
    }
    let text: string;
    try {
      text = (await readBounded(res.body, { maxBytes: this.maxAnswerBytes })).bytes.toString(
        'utf8',
      );
    } catch (err) {
      if (err instanceof PeerAnswerError) {
        throw new CliError(
          CLI_ERRORS.server,
          `the server answered more than ${this.maxAnswerBytes} bytes`,
        );
      }
      throw this.unreachable(err);
    }
    let body: unknown = text;
    if (text !== '' && /json/.test(res.headers.get('content-type') ?? '')) {
      try {
        body = JSON.parse(text);
      } catch {
        // keep the text
      }
    }
    if (res.ok) return body as T;
    const message = problemText(res.status, body);
    const problem =
      body && typeof body === 'object' ? (body as Record<string, unknown>) : undefined;
    if (res.status === 401) {
      throw new CliError(
        CLI_ERRORS.auth,
        o.anonymous
          ? message
          : `${message}\nthe session has ended: run \`trawl login --url ${this.url}\` again`,
        EXIT.auth,
        { problem },
      );
    }
    if (res.status === 403) throw new CliError(CLI_ERRORS.auth, message, EXIT.auth, { problem });
    throw new CliError(CLI_ERRORS.server, message, EXIT.error, { problem });
  }

  private async send(
    method: string,
    path: string,
    o: RequestOptions,
    session: Session | undefined,
  ): Promise<Response> {
    const u = new URL(`${this.url}${path}`);
    for (const [k, v] of Object.entries(o.query ?? {}))
      if (v !== undefined) u.searchParams.set(k, String(v));
    const headers: Record<string, string> = { accept: 'application/json' };
    if (session) headers.authorization = `Bearer ${session.access_token}`;
    let body: string | Uint8Array | undefined;
    if (o.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(o.json);
    } else if (o.raw) {
      headers['content-type'] = o.raw.contentType;
      body = o.raw.body;
    } else if (o.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(o.form).toString();
    }
    try {
      return await this.fetchFn(u, {
        method,
        headers,
        ...(body === undefined ? {} : { body }),
        ...(o.signal ? { signal: o.signal } : {}),
      });
    } catch (err) {
      throw this.unreachable(err);
    }
  }
}

interface TokenAnswer {
  access_token: string;
  refresh_token?: string;
  expires_in?: number;
}

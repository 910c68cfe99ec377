/**
 * The API client: the access token lives in memory only; the refresh token in an HttpOnly cookie
 * scoped to /auth that this code never sees (`X-Trawl-Refresh: cookie` asks the gateway for that).
 */
export type Role = 'viewer' | 'analyst' | 'admin';
export interface Me {
  username: string;
  roles: Role[];
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly problems: { path: string; message: string }[] = [],
  ) {
    super(message);
  }
}

type Listener = () => void;
let token: string | null = null;
let me: Me | null = null;
let restored = false;
const listeners = new Set<Listener>();
const COOKIE_MODE = { 'x-trawl-refresh': 'cookie' } as const;

function changed() {
  for (const l of listeners) l();
}

export const session = {
  get me(): Me | null {
    return me;
  },
  get restored(): boolean {
    return restored;
  },
  subscribe(fn: Listener): () => void {
    listeners.add(fn);
    return () => listeners.delete(fn);
  },
  token(): string | null {
    return token;
  },
};

const RANK: Record<Role, number> = { viewer: 1, analyst: 2, admin: 3 };
export function can(role: Role): boolean {
  return !!me?.roles.some((r) => RANK[r] >= RANK[role]);
}

async function problemOf(res: Response): Promise<ApiError> {
  let body: { code?: string; detail?: string; title?: string; errors?: unknown } = {};
  try {
    body = (await res.json()) as typeof body;
  } catch {
    // not JSON
  }
  const problems = Array.isArray(body.errors)
    ? (body.errors as { path: string; message: string }[])
    : [];
  return new ApiError(
    res.status,
    body.code ?? `HTTP_${res.status}`,
    body.detail ?? body.title ?? res.statusText,
    problems,
  );
}

let refreshing: Promise<boolean> | null = null;
/** A new access token through the cookie; false when there is no valid session. */
function refresh(): Promise<boolean> {
  refreshing ??= (async () => {
    try {
      const res = await fetch('/auth/refresh', {
        method: 'POST',
        headers: { ...COOKIE_MODE, 'content-type': 'application/json' },
        credentials: 'same-origin',
        body: '{}',
      });
      if (!res.ok) return false;
      token = ((await res.json()) as { access_token: string }).access_token;
      return true;
    } catch {
      return false;
    } finally {
      refreshing = null;
    }
  })();
  return refreshing;
}

export interface RequestOptions {
  method?: string;
  json?: unknown;
  body?: BodyInit;
  headers?: Record<string, string>;
  /** Statuses answered with their body instead of an error (health answers 503 when degraded). */
  accept?: number[];
  signal?: AbortSignal;
}

/** An authenticated request; refreshes once on 401; raw Response (for downloads and streams). */
export async function send(path: string, o: RequestOptions = {}): Promise<Response> {
  const go = () => {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    if (token) headers.authorization = `Bearer ${token}`;
    let body = o.body;
    if (o.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(o.json);
    }
    return fetch(path, {
      method: o.method ?? 'GET',
      headers,
      credentials: 'same-origin',
      ...(body !== undefined ? { body } : {}),
      ...(o.signal ? { signal: o.signal } : {}),
    });
  };
  let res = await go();
  if (res.status === 401 && (await refresh())) res = await go();
  // while a password change signs in again, a request that raced it does not end the session
  if (res.status === 401 && !changingPassword) {
    token = null;
    me = null;
    changed();
  }
  return res;
}

let changingPassword = false;

/**
 * Changes the signed-in user's password (`POST /api/v1/me/password`) and signs in again with the
 * new one: the gateway ends every session of the user, this tab's included.
 */
export async function changePassword(current: string, next: string): Promise<void> {
  const username = me?.username;
  if (!username) throw new ApiError(401, 'TRAWL_ERR_UNAUTHORIZED', 'not signed in');
  changingPassword = true;
  try {
    await api('/api/v1/me/password', {
      method: 'POST',
      json: { current_password: current, new_password: next },
    });
    await signIn(username, next);
  } finally {
    changingPassword = false;
  }
}

export async function api<T>(path: string, o: RequestOptions = {}): Promise<T> {
  const res = await send(path, o);
  if (!res.ok && !o.accept?.includes(res.status)) throw await problemOf(res);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

export async function signIn(username: string, password: string): Promise<void> {
  const res = await fetch('/auth/token', {
    method: 'POST',
    headers: { ...COOKIE_MODE, 'content-type': 'application/x-www-form-urlencoded' },
    credentials: 'same-origin',
    body: new URLSearchParams({ grant_type: 'password', username, password }).toString(),
  });
  if (!res.ok) throw await problemOf(res);
  token = ((await res.json()) as { access_token: string }).access_token;
  me = await api<Me>('/auth/me');
  changed();
}

export async function signOut(): Promise<void> {
  await fetch('/auth/logout', {
    method: 'POST',
    headers: { ...COOKIE_MODE, 'content-type': 'application/json' },
    credentials: 'same-origin',
    body: '{}',
  }).catch(() => undefined);
  token = null;
  me = null;
  changed();
}

/**
 * Whether the gateway set a session cookie that has not ended (`trawl_session`, beside the HttpOnly
 * refresh cookie this code cannot see): without it there is no session to restore, and no
 * request is made.
 */
function hasSessionMark(): boolean {
  return document.cookie.split(';').some((c) => c.trim() === 'trawl_session=1');
}

/** At page load: a session from the cookie, if it holds one. */
export async function restore(): Promise<void> {
  try {
    if (hasSessionMark() && (await refresh())) me = await api<Me>('/auth/me');
  } catch {
    me = null;
  }
  restored = true;
  changed();
}

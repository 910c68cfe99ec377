/** Connection URLs built from their parts; user, password, database and vhost are percent-encoded. */
const enc = encodeURIComponent;

function hostPart(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** A postgres:// URL from its parts (user and password escaped). */
export function buildPostgresUrl(p: {
  host: string;
  port: number;
  db: string;
  user: string;
  password?: string | undefined;
}): string {
  const auth = p.password ? `${enc(p.user)}:${enc(p.password)}@` : `${enc(p.user)}@`;
  return `postgres://${auth}${hostPart(p.host)}:${p.port}/${enc(p.db)}`;
}

/** A redis:// URL from its parts (password escaped). */
export function buildRedisUrl(p: {
  host: string;
  port: number;
  password?: string | undefined;
  db?: number;
}): string {
  const auth = p.password ? `:${enc(p.password)}@` : '';
  return `redis://${auth}${hostPart(p.host)}:${p.port}${p.db === undefined ? '' : `/${p.db}`}`;
}

/** The vhost is always in the path (`/` → `%2F`), so the URL is unambiguous. */
export function buildAmqpUrl(p: {
  host: string;
  port: number;
  user: string;
  password: string;
  vhost: string;
}): string {
  return `amqp://${enc(p.user)}:${enc(p.password)}@${hostPart(p.host)}:${p.port}/${enc(p.vhost)}`;
}

/** The URL with its password replaced by `***`: safe to log. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.href;
  } catch {
    return '[unparseable URL]';
  }
}

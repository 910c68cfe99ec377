import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { certificateThumbprints, decodeJwt, verifyJwt } from '../jwt.ts';
import { CLIENT_ASSERTION_TYPE, JWT_BEARER_GRANT } from '../token-source.ts';
import { sendJson, startTestHttpServer } from './http.ts';

export interface IssuedToken {
  /** The Microsoft client id, or the Google service account's email / OAuth client id. */
  client: string;
  /** The user the token acts for (domain-wide delegation, refresh token); absent for app-only. */
  subject?: string;
  scope: string;
  expiresAt: number;
}

interface MsApp {
  tenant: string;
  clientId: string;
  secret?: string;
  certificatePem?: string;
  consented: boolean;
}
interface ServiceAccount {
  email: string;
  publicKeyPem: string;
  keyId?: string;
  /** subject → scopes delegated to the service account for it. */
  delegated: Map<string, Set<string>>;
}
interface RefreshGrant {
  clientId: string;
  clientSecret?: string;
  subject: string;
  scope: string;
  revoked: boolean;
}

export interface TokenServerStats {
  requests: number;
  issued: number;
  refused: number;
  byGrant: Record<string, number>;
}

export interface TestTokenServer {
  url: string;
  /** `<url>/<tenant>/oauth2/v2.0/token`, as the Microsoft identity platform's v2.0 endpoint. */
  microsoftTokenUrl(tenant: string): string;
  /** `<url>/token`, as Google's `https://oauth2.googleapis.com/token`. */
  googleTokenUrl: string;
  /** RFC 7662 introspection (Dovecot's oauth2 passdb, `introspection_mode = post`). */
  introspectionUrl: string;
  registerApp(app: {
    tenant: string;
    clientId: string;
    secret?: string;
    certificatePem?: string;
  }): void;
  registerServiceAccount(sa: {
    email: string;
    publicKeyPem: string;
    keyId?: string;
    delegate: { subject: string; scopes: string[] }[];
  }): void;
  registerRefreshToken(r: {
    token: string;
    clientId: string;
    clientSecret?: string;
    subject: string;
    scope: string;
  }): void;
  /**
   * Revokes (false) or grants again (true) the consent of a Microsoft app, the delegation of a
   * service account, or a refresh token's grant: tokens issued before stop working at once.
   */
  setConsent(client: string, granted: boolean): void;
  /** The next `n` token requests answer `status` (503 by default; 429 with Retry-After: 1). */
  failNext(n: number, status?: number): void;
  /** expires_in of the tokens issued from now on (default 3600). */
  lifetimeSeconds: number;
  /** What a bearer token grants, or null (unknown, expired, revoked). */
  validate(accessToken: string): IssuedToken | null;
  /** Expires every issued token (the next API call answers 401). */
  expireAll(): void;
  stats: TokenServerStats;
  close(): Promise<void>;
}

const MS_ERRORS = {
  badSecret: [
    401,
    'invalid_client',
    7000215,
    'Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID.',
  ],
  badAssertion: [
    401,
    'invalid_client',
    700027,
    'The certificate with identifier used to sign the client assertion is not registered on application.',
  ],
  noApp: [
    400,
    'unauthorized_client',
    700016,
    'Application with identifier was not found in the directory.',
  ],
  noTenant: [400, 'invalid_request', 90002, 'Tenant not found.'],
  consent: [
    400,
    'invalid_grant',
    65001,
    'The user or administrator has not consented to use the application.',
  ],
} as const;

function msError(res: ServerResponse, e: (typeof MS_ERRORS)[keyof typeof MS_ERRORS]): void {
  const [status, error, code, text] = e;
  sendJson(res, status, {
    error,
    error_description: `AADSTS${code}: ${text} Trace ID: 00000000-0000-0000-0000-000000000000`,
    error_codes: [code],
    timestamp: new Date().toISOString(),
    trace_id: '00000000-0000-0000-0000-000000000000',
    correlation_id: '00000000-0000-0000-0000-000000000000',
  });
}

/**
 * A local OAuth 2.0 authorization server speaking the token endpoints of the Microsoft identity
 * platform (client credentials with a secret or a certificate's JWT assertion, RFC 7523) and of
 * Google (the JWT bearer grant of service accounts with `sub`, refresh tokens), with their error
 * answers, and RFC 7662 introspection. Tests only.
 */
export async function startTestTokenServer(): Promise<TestTokenServer> {
  const apps = new Map<string, MsApp>();
  const tenants = new Set<string>();
  const accounts = new Map<string, ServiceAccount>();
  const refresh = new Map<string, RefreshGrant>();
  const revoked = new Set<string>();
  const tokens = new Map<string, IssuedToken>();
  const stats: TokenServerStats = { requests: 0, issued: 0, refused: 0, byGrant: {} };
  let failing = { n: 0, status: 503 };
  const state = { lifetimeSeconds: 3600 };
  let baseUrl = '';

  function issue(res: ServerResponse, t: Omit<IssuedToken, 'expiresAt'>): void {
    const token = `tk_${randomBytes(24).toString('hex')}`;
    tokens.set(token, { ...t, expiresAt: Date.now() + state.lifetimeSeconds * 1000 });
    stats.issued += 1;
    sendJson(res, 200, {
      token_type: 'Bearer',
      expires_in: state.lifetimeSeconds,
      ext_expires_in: state.lifetimeSeconds,
      access_token: token,
    });
  }

  function microsoft(res: ServerResponse, tenant: string, form: URLSearchParams) {
    const tokenUrl = `${baseUrl}/${tenant}/oauth2/v2.0/token`;
    if (!tenants.has(tenant)) return msError(res, MS_ERRORS.noTenant);
    if (form.get('grant_type') !== 'client_credentials')
      return sendJson(res, 400, {
        error: 'unsupported_grant_type',
        error_description: 'AADSTS70003: The app requested an unsupported grant type.',
        error_codes: [70003],
      });
    const clientId = form.get('client_id') ?? '';
    const app = apps.get(clientId);
    if (!app || app.tenant !== tenant) return msError(res, MS_ERRORS.noApp);
    const assertion = form.get('client_assertion');
    if (assertion !== null) {
      if (form.get('client_assertion_type') !== CLIENT_ASSERTION_TYPE || !app.certificatePem)
        return msError(res, MS_ERRORS.badAssertion);
      const decoded = decodeJwt(assertion);
      const t = certificateThumbprints(app.certificatePem);
      const h = decoded?.header ?? {};
      if (h.x5t !== t.x5t && h['x5t#S256'] !== t.x5tS256)
        return msError(res, MS_ERRORS.badAssertion);
      const v = verifyJwt(assertion, app.certificatePem);
      const now = Date.now() / 1000;
      const c = v?.claims ?? {};
      if (
        !v ||
        c.aud !== tokenUrl ||
        c.iss !== clientId ||
        c.sub !== clientId ||
        typeof c.jti !== 'string' ||
        typeof c.exp !== 'number' ||
        c.exp < now ||
        (typeof c.nbf === 'number' && c.nbf > now + 300)
      )
        return msError(res, MS_ERRORS.badAssertion);
    } else if (!app.secret || form.get('client_secret') !== app.secret) {
      return msError(res, MS_ERRORS.badSecret);
    }
    if (!app.consented) return msError(res, MS_ERRORS.consent);
    issue(res, { client: clientId, scope: form.get('scope') ?? '' });
  }

  function google(res: ServerResponse, form: URLSearchParams) {
    const grant = form.get('grant_type');
    if (grant === JWT_BEARER_GRANT) {
      const assertion = form.get('assertion') ?? '';
      const claims = decodeJwt(assertion)?.claims ?? {};
      const sa = accounts.get(String(claims.iss ?? ''));
      const v = sa ? verifyJwt(assertion, sa.publicKeyPem) : null;
      const now = Date.now() / 1000;
      if (
        !sa ||
        !v ||
        v.claims.aud !== `${baseUrl}/token` ||
        typeof v.claims.exp !== 'number' ||
        v.claims.exp < now ||
        (v.claims.exp as number) - (v.claims.iat as number) > 3600
      )
        return sendJson(res, 400, {
          error: 'invalid_grant',
          error_description: 'Invalid JWT Signature.',
        });
      const subject = typeof v.claims.sub === 'string' ? v.claims.sub : undefined;
      const scopes = String(v.claims.scope ?? '')
        .split(' ')
        .filter(Boolean);
      if (subject) {
        const allowed = sa.delegated.get(subject);
        if (revoked.has(sa.email) || !allowed || !scopes.every((s) => allowed.has(s)))
          return sendJson(res, 401, {
            error: 'unauthorized_client',
            error_description:
              'Client is unauthorized to retrieve access tokens using this method, or client not authorized for any of the scopes requested.',
          });
      }
      return issue(res, {
        client: sa.email,
        ...(subject ? { subject } : {}),
        scope: scopes.join(' '),
      });
    }
    if (grant === 'refresh_token') {
      const r = refresh.get(form.get('refresh_token') ?? '');
      if (
        !r ||
        r.clientId !== form.get('client_id') ||
        (r.clientSecret && r.clientSecret !== form.get('client_secret'))
      )
        return sendJson(res, 401, { error: 'invalid_client', error_description: 'Unauthorized' });
      if (r.revoked || revoked.has(r.clientId))
        return sendJson(res, 400, {
          error: 'invalid_grant',
          error_description: 'Token has been expired or revoked.',
        });
      return issue(res, { client: r.clientId, subject: r.subject, scope: r.scope });
    }
    sendJson(res, 400, {
      error: 'unsupported_grant_type',
      error_description: 'Invalid grant_type',
    });
  }

  const http = await startTestHttpServer((req, res, body) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (req.method !== 'POST') return sendJson(res, 405, { error: 'invalid_request' });
    const form = new URLSearchParams(body.toString('utf8'));
    if (path === '/introspect') {
      const t = server.validate(form.get('token') ?? '');
      return sendJson(
        res,
        200,
        t
          ? {
              active: true,
              username: t.subject ?? t.client,
              client_id: t.client,
              scope: t.scope,
              exp: Math.floor(t.expiresAt / 1000),
            }
          : { active: false },
      );
    }
    stats.requests += 1;
    const g = form.get('grant_type') ?? '?';
    stats.byGrant[g] = (stats.byGrant[g] ?? 0) + 1;
    if (failing.n > 0) {
      failing.n -= 1;
      stats.refused += 1;
      return sendJson(
        res,
        failing.status,
        { error: 'temporarily_unavailable', error_description: 'try again later' },
        failing.status === 429 ? { 'retry-after': '1' } : {},
      );
    }
    const ms = /^\/([A-Za-z0-9.-]{1,100})\/oauth2\/v2\.0\/token$/.exec(path);
    const before = stats.issued;
    if (ms?.[1]) microsoft(res, ms[1], form);
    else if (path === '/token') google(res, form);
    else sendJson(res, 404, { error: 'invalid_request', error_description: 'no such endpoint' });
    if (stats.issued === before) stats.refused += 1;
  });
  baseUrl = http.url;

  const server: TestTokenServer = {
    url: http.url,
    microsoftTokenUrl: (tenant) => `${http.url}/${tenant}/oauth2/v2.0/token`,
    googleTokenUrl: `${http.url}/token`,
    introspectionUrl: `${http.url}/introspect`,
    registerApp(a) {
      tenants.add(a.tenant);
      apps.set(a.clientId, { ...a, consented: true });
    },
    registerServiceAccount(sa) {
      accounts.set(sa.email, {
        email: sa.email,
        publicKeyPem: sa.publicKeyPem,
        ...(sa.keyId ? { keyId: sa.keyId } : {}),
        delegated: new Map(sa.delegate.map((d) => [d.subject, new Set(d.scopes)])),
      });
    },
    registerRefreshToken(r) {
      refresh.set(r.token, { ...r, revoked: false });
    },
    setConsent(client, granted) {
      const app = apps.get(client);
      if (app) app.consented = granted;
      if (granted) revoked.delete(client);
      else revoked.add(client);
      for (const r of refresh.values()) if (r.clientId === client) r.revoked = !granted;
      if (!granted) for (const [k, t] of tokens) if (t.client === client) tokens.delete(k);
    },
    failNext(n, status = 503) {
      failing = { n, status };
    },
    get lifetimeSeconds() {
      return state.lifetimeSeconds;
    },
    set lifetimeSeconds(v: number) {
      state.lifetimeSeconds = v;
    },
    validate(accessToken) {
      const t = tokens.get(accessToken);
      if (!t || t.expiresAt <= Date.now()) return null;
      return t;
    },
    expireAll() {
      tokens.clear();
    },
    stats,
    close: () => http.close(),
  };
  return server;
}

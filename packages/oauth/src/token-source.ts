import { randomUUID } from 'node:crypto';
import { readApiAnswer } from './bounded.ts';
import { OAUTH_ERRORS, OAuthError } from './errors.ts';
import { OAuthGrant, type OAuthGrantInput, TokenAnswer, TokenErrorAnswer } from './grants.ts';
import { certificateThumbprints, signJwt } from './jwt.ts';

/** The client assertion type of a signed JWT (RFC 7523). */
export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** The grant type of a JWT bearer grant (RFC 7523). */
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** Where and how a token source gets its access tokens. */
export interface TokenSourceOptions {
  fetch?: typeof fetch;
  now?: () => number;
  /** Bound of one token request (default 15 s). */
  timeoutMs?: number;
  /** Bound of the token endpoint's answer (default 64 KiB). */
  maxAnswerBytes?: number;
  /** After a failed request, further calls fail at once for this long (default 10 s). */
  holdFailureMs?: number;
}

/** Access tokens for a mailbox API, fetched and renewed before they expire. */
export interface TokenSource {
  /** A valid access token: the cached one until shortly before it expires, else a new one. */
  token(): Promise<string>;
  /** Drops the cached token (the API answered 401 with it). */
  invalidate(): void;
  /** The grant's kind (for logs; never the secret). */
  readonly kind: OAuthGrant['kind'];
}

/** Time before expiry at which a token is replaced: a fifth of its life, at most 5 minutes. */
function refreshMarginMs(lifetimeSeconds: number): number {
  return Math.min(300, Math.floor(lifetimeSeconds / 5)) * 1000;
}

/** The first AADSTS number of a Microsoft answer (error_codes, else the description's prefix). */
function aadstsOf(e: TokenErrorAnswer): number | undefined {
  if (e.error_codes?.[0] !== undefined) return e.error_codes[0];
  const m = /^AADSTS(\d{1,9})\b/.exec(e.error_description ?? '');
  return m?.[1] ? Number(m[1]) : undefined;
}

const INVALID_CLIENT_AADSTS = new Set([7000215, 7000222, 700027, 700023, 50012, 7000216]);
const CONSENT_AADSTS = new Set([65001, 65004, 65005, 500011, 7000112, 7000114]);
const TENANT_AADSTS = new Set([90002, 900023, 90072]);

/** The error for a token endpoint's refusal, with what an administrator should do about it. */
export function classifyTokenError(status: number, body: unknown): OAuthError {
  const parsed = TokenErrorAnswer.safeParse(body);
  if (!parsed.success) {
    if (status >= 500 || status === 429)
      return new OAuthError(OAUTH_ERRORS.unavailable, `the token endpoint answered ${status}`);
    return new OAuthError(
      OAUTH_ERRORS.badAnswer,
      `the token endpoint answered ${status} without an OAuth 2.0 error`,
    );
  }
  const e = parsed.data;
  const aadsts = aadstsOf(e);
  const said = (e.error_description ?? '').slice(0, 300).split(/\r?\n/)[0] ?? '';
  const base = { oauthError: e.error, aadsts, needsAdmin: true };
  const msg = (what: string) => `${what} (${e.error}${said ? `: ${said}` : ''})`;
  if (aadsts !== undefined && TENANT_AADSTS.has(aadsts))
    return new OAuthError(OAUTH_ERRORS.tenantNotFound, msg('the tenant id is wrong'), base);
  if (aadsts === 700016)
    return new OAuthError(
      OAUTH_ERRORS.appNotFound,
      msg('the application (client id) is not registered in this tenant'),
      base,
    );
  if (aadsts !== undefined && CONSENT_AADSTS.has(aadsts))
    return new OAuthError(
      OAUTH_ERRORS.consentRequired,
      msg('an administrator has not granted (or has revoked) consent for the permission'),
      base,
    );
  if (e.error === 'invalid_client' || (aadsts !== undefined && INVALID_CLIENT_AADSTS.has(aadsts)))
    return new OAuthError(
      OAUTH_ERRORS.invalidClient,
      msg('the client id, secret or certificate is wrong or expired'),
      base,
    );
  if (e.error === 'unauthorized_client' || e.error === 'consent_required')
    return new OAuthError(
      OAUTH_ERRORS.consentRequired,
      msg(
        'the client is not authorised for this grant or scope (Google: domain-wide delegation of the scope to this client id; Microsoft: admin consent)',
      ),
      base,
    );
  if (e.error === 'access_denied')
    return new OAuthError(OAUTH_ERRORS.accessDenied, msg('access was denied'), base);
  if (e.error === 'invalid_grant')
    return new OAuthError(
      OAUTH_ERRORS.invalidGrant,
      msg('the grant was refused (a revoked or expired refresh token, a rejected assertion)'),
      base,
    );
  if (e.error === 'invalid_scope')
    return new OAuthError(OAUTH_ERRORS.invalidScope, msg('the scope is not allowed'), base);
  if (status >= 500 || status === 429 || e.error === 'temporarily_unavailable')
    return new OAuthError(OAUTH_ERRORS.unavailable, msg('the token endpoint is unavailable'), {
      ...base,
      needsAdmin: false,
    });
  return new OAuthError(OAUTH_ERRORS.badAnswer, msg('the token request was refused'), base);
}

/** The form body of one token request for `g` (assertions signed now). */
function tokenRequestBody(g: OAuthGrant, nowMs: number): URLSearchParams {
  const now = Math.floor(nowMs / 1000);
  switch (g.kind) {
    case 'client_secret':
      return new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: g.client_id,
        client_secret: g.client_secret,
        scope: g.scope,
      });
    case 'client_certificate': {
      const t = certificateThumbprints(g.certificate);
      const header =
        g.alg === 'RS256' ? { typ: 'JWT', x5t: t.x5t } : { typ: 'JWT', 'x5t#S256': t.x5tS256 };
      const assertion = signJwt(
        header,
        {
          aud: g.token_url,
          iss: g.client_id,
          sub: g.client_id,
          jti: randomUUID(),
          nbf: now,
          iat: now,
          exp: now + 600,
        },
        g.private_key,
        g.alg,
      );
      return new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: g.client_id,
        client_assertion_type: CLIENT_ASSERTION_TYPE,
        client_assertion: assertion,
        scope: g.scope,
      });
    }
    case 'service_account': {
      const assertion = signJwt(
        { typ: 'JWT', ...(g.private_key_id ? { kid: g.private_key_id } : {}) },
        {
          iss: g.client_email,
          scope: g.scope,
          aud: g.token_url,
          iat: now,
          exp: now + 3600,
          ...(g.subject ? { sub: g.subject } : {}),
        },
        g.private_key,
        'RS256',
      );
      return new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion });
    }
    case 'refresh_token': {
      const body = new URLSearchParams({
        grant_type: 'refresh_token',
        client_id: g.client_id,
        refresh_token: g.refresh_token,
      });
      if (g.client_secret) body.set('client_secret', g.client_secret);
      if (g.scope) body.set('scope', g.scope);
      return body;
    }
  }
}

/**
 * An access token source for one grant: one request at a time (concurrent callers share it), the
 * token cached until shortly before it expires, bounded reads of the endpoint's answer, and one
 * OAuthError per refusal naming what to fix. A rotated refresh token replaces the old one in memory.
 */
export function createTokenSource(input: OAuthGrantInput, o: TokenSourceOptions = {}): TokenSource {
  let grant = OAuthGrant.parse(input);
  const doFetch = o.fetch ?? fetch;
  const now = o.now ?? Date.now;
  const timeoutMs = o.timeoutMs ?? 15_000;
  const maxBytes = o.maxAnswerBytes ?? 64 * 1024;
  const holdFailureMs = o.holdFailureMs ?? 10_000;
  let cached: { token: string; refreshAt: number } | undefined;
  let inflight: Promise<string> | undefined;
  let failed: { error: OAuthError; until: number } | undefined;

  async function request(): Promise<string> {
    const started = now();
    let res: Response;
    try {
      res = await doFetch(grant.token_url, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: tokenRequestBody(grant, started).toString(),
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'error',
      });
    } catch (err) {
      throw new OAuthError(
        OAUTH_ERRORS.unavailable,
        `the token endpoint did not answer (${(err as Error).message})`,
        { cause: err },
      );
    }
    let body: unknown;
    try {
      const bytes = await readApiAnswer(res, maxBytes, 'token endpoint');
      body = JSON.parse(bytes.toString('utf8'));
    } catch (err) {
      if (res.status >= 500 || res.status === 429)
        throw new OAuthError(OAUTH_ERRORS.unavailable, `the token endpoint answered ${res.status}`);
      throw new OAuthError(
        OAUTH_ERRORS.badAnswer,
        `the token endpoint's answer is not JSON within ${maxBytes} bytes`,
        { cause: err },
      );
    }
    if (!res.ok) throw classifyTokenError(res.status, body);
    const ok = TokenAnswer.safeParse(body);
    if (!ok.success)
      throw new OAuthError(OAUTH_ERRORS.badAnswer, 'the token answer has no valid access_token');
    const lifetime = ok.data.expires_in ?? 3600;
    cached = {
      token: ok.data.access_token,
      refreshAt: started + lifetime * 1000 - refreshMarginMs(lifetime),
    };
    if (grant.kind === 'refresh_token' && ok.data.refresh_token)
      grant = { ...grant, refresh_token: ok.data.refresh_token };
    return ok.data.access_token;
  }

  return {
    kind: grant.kind,
    token() {
      const t = now();
      if (cached && t < cached.refreshAt) return Promise.resolve(cached.token);
      if (failed && t < failed.until) return Promise.reject(failed.error);
      if (!inflight) {
        inflight = request()
          .then((token) => {
            failed = undefined;
            return token;
          })
          .catch((err: unknown) => {
            if (err instanceof OAuthError) failed = { error: err, until: now() + holdFailureMs };
            throw err;
          })
          .finally(() => {
            inflight = undefined;
          });
      }
      return inflight;
    },
    invalidate() {
      cached = undefined;
    },
  };
}

import {
  constants,
  createHash,
  createPrivateKey,
  createPublicKey,
  type KeyObject,
  sign,
  verify,
  X509Certificate,
} from 'node:crypto';

/** JWS algorithms Trawl signs with: RSA PKCS#1 v1.5 or RSA-PSS, both over SHA-256. */
export type JwtAlg = 'RS256' | 'PS256';

/** base64url without padding (RFC 7515). */
export function base64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

function signOptions(key: KeyObject, alg: JwtAlg) {
  return alg === 'PS256'
    ? {
        key,
        padding: constants.RSA_PKCS1_PSS_PADDING,
        saltLength: constants.RSA_PSS_SALTLEN_DIGEST,
      }
    : key;
}

/** A compact JWS (RFC 7515) of `claims`, signed with an RSA private key (PEM or KeyObject). */
export function signJwt(
  header: Record<string, unknown>,
  claims: Record<string, unknown>,
  privateKey: string | KeyObject,
  alg: JwtAlg = 'RS256',
): string {
  const key = typeof privateKey === 'string' ? createPrivateKey(privateKey) : privateKey;
  const input = `${base64url(JSON.stringify({ ...header, alg }))}.${base64url(JSON.stringify(claims))}`;
  const signature = sign('sha256', Buffer.from(input), signOptions(key, alg));
  return `${input}.${signature.toString('base64url')}`;
}

export interface DecodedJwt {
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
}

/** Header and claims of a compact JWS, when its signature verifies with `publicKey`; else null. */
export function verifyJwt(token: string, publicKey: string | KeyObject): DecodedJwt | null {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  const [h, c, s] = parts as [string, string, string];
  try {
    const header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'));
    const claims = JSON.parse(Buffer.from(c, 'base64url').toString('utf8'));
    const alg = header?.alg;
    if (alg !== 'RS256' && alg !== 'PS256') return null;
    const key = typeof publicKey === 'string' ? createPublicKey(publicKey) : publicKey;
    const ok = verify(
      'sha256',
      Buffer.from(`${h}.${c}`),
      signOptions(key, alg),
      Buffer.from(s, 'base64url'),
    );
    return ok ? { header, claims } : null;
  } catch {
    return null;
  }
}

/** Header and claims without checking the signature (to find which key should check it). */
export function decodeJwt(token: string): DecodedJwt | null {
  const [h, c] = token.split('.');
  if (!h || !c) return null;
  try {
    return {
      header: JSON.parse(Buffer.from(h, 'base64url').toString('utf8')),
      claims: JSON.parse(Buffer.from(c, 'base64url').toString('utf8')),
    };
  } catch {
    return null;
  }
}

/** The base64url SHA-1 (`x5t`) and SHA-256 (`x5t#S256`) thumbprints of a PEM certificate's DER. */
export function certificateThumbprints(certificatePem: string): { x5t: string; x5tS256: string } {
  const der = new X509Certificate(certificatePem).raw;
  return {
    x5t: createHash('sha1').update(der).digest('base64url'),
    x5tS256: createHash('sha256').update(der).digest('base64url'),
  };
}

import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

/**
 * Per-party credentials (docs/security.md, "Credentials: who holds what"). Each plugin, each
 * retriever and each platform service that calls another one has its own credential, derived from
 * the platform key (`INTERNAL_API_KEY`):
 *
 *   trawl1.<kind>.<base64url(id)>.<base64url(HMAC-SHA256(key, "trawl credential v1\n<kind>\n<id>"))>
 *
 * The party is written in the credential, so a holder of the platform key (the gateway, the
 * orchestrators) checks one without a lookup, in embedded and scale-out mode alike, and no new
 * secret has to be distributed: an operator prints a party's credential with
 * `trawl credentials <kind> <id>` and gives it to that party only. A party cannot derive another's
 * credential, nor the platform key, from its own.
 */
export const PartyKind = z.enum(['plugin', 'retriever', 'service']);
export type PartyKind = z.infer<typeof PartyKind>;

/** Platform services with a credential of their own (`service:<name>`). */
export const PLATFORM_SERVICES = ['mail-orchestrator'] as const;
/** One of PLATFORM_SERVICES. */
export type PlatformServiceName = (typeof PLATFORM_SERVICES)[number];

/** Plugin ids and retriever names: the characters the configuration allows for them. */
const PARTY_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** Who a service credential belongs to: a plugin, a retriever or a platform service. */
export const Party = z.object({
  kind: PartyKind,
  id: z.string().regex(PARTY_ID, 'a plugin id, retriever name or service name'),
});
export type Party = z.infer<typeof Party>;

const PREFIX = 'trawl1';
const LABEL = 'trawl credential v1';

function mac(platformKey: string, party: Party): Buffer {
  return createHmac('sha256', platformKey).update(`${LABEL}\n${party.kind}\n${party.id}`).digest();
}

/** `plugin:headers`, `retriever:imap`, `service:mail-orchestrator`: how logs and audit name a party. */
export function partyLabel(party: Party): string {
  return `${party.kind}:${party.id}`;
}

/** The credential of `party`, derived from the platform key. Throws on an invalid party. */
export function deriveCredential(platformKey: string, party: Party): string {
  if (platformKey.length === 0) throw new Error('the platform key is empty');
  const p = Party.parse(party);
  const id = Buffer.from(p.id, 'utf8').toString('base64url');
  return `${PREFIX}.${p.kind}.${id}.${mac(platformKey, p).toString('base64url')}`;
}

/** Whether a presented string has the shape of a derived credential (it says nothing of its validity). */
export function looksLikeCredential(presented: string): boolean {
  return presented.startsWith(`${PREFIX}.`);
}

/**
 * The party a presented credential belongs to, when it was derived from `platformKey`; null
 * otherwise. The MAC is compared in constant time; the party is read before, which only tells a
 * caller what it already wrote.
 */
export function verifyCredential(platformKey: string, presented: string): Party | null {
  if (platformKey.length === 0 || presented.length > 512) return null;
  const parts = presented.split('.');
  if (parts.length !== 4 || parts[0] !== PREFIX) return null;
  const [, kind, idB64, macB64] = parts as [string, string, string, string];
  const k = PartyKind.safeParse(kind);
  if (!k.success) return null;
  const id = Buffer.from(idB64, 'base64url').toString('utf8');
  const party = Party.safeParse({ kind: k.data, id });
  if (!party.success) return null;
  // the id must round-trip: one credential, one spelling
  if (Buffer.from(id, 'utf8').toString('base64url') !== idB64) return null;
  const given = Buffer.from(macB64, 'base64url');
  const expected = mac(platformKey, party.data);
  if (given.length !== expected.length) return null;
  return timingSafeEqual(given, expected) ? party.data : null;
}

/**
 * A holder of the platform key answering calls meant for one party (a plugin server checking the
 * orchestrator's call to plugin `id`): memoises the derivation per party.
 */
export function credentialDeriver(platformKey: string): (party: Party) => string {
  const memo = new Map<string, string>();
  return (party) => {
    const k = partyLabel(party);
    let c = memo.get(k);
    if (c === undefined) {
      c = deriveCredential(platformKey, party);
      if (memo.size < 10_000) memo.set(k, c);
    }
    return c;
  };
}

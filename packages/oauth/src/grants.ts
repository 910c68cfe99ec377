import { jsonText } from '@trawl/contracts';
import { z } from 'zod';

const url = z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' });
const pem = (what: string) =>
  z.string().regex(/-----BEGIN [A-Z ]+-----/, { message: `must be a PEM ${what}` });

/**
 * How Trawl obtains an access token (docs/mail-ingestion.md):
 *  - client_secret: client credentials with a client secret (Microsoft Entra ID app-only);
 *  - client_certificate: client credentials with a JWT client assertion signed by the app's
 *    certificate key (RFC 7523, as the Microsoft identity platform documents it);
 *  - service_account: the JWT bearer grant of a Google service account, acting as `subject`
 *    through domain-wide delegation;
 *  - refresh_token: a user's refresh token (Google or Microsoft delegated access).
 */
export const OAuthGrant = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('client_secret'),
    token_url: url,
    client_id: z.string().min(1),
    client_secret: z.string().min(1),
    scope: z.string().min(1),
  }),
  z.object({
    kind: z.literal('client_certificate'),
    token_url: url,
    client_id: z.string().min(1),
    private_key: pem('private key'),
    certificate: pem('certificate'),
    scope: z.string().min(1),
    /** RS256 with `x5t` (the documented default) or PS256 with `x5t#S256`. */
    alg: z.enum(['RS256', 'PS256']).default('RS256'),
  }),
  z.object({
    kind: z.literal('service_account'),
    token_url: url,
    client_email: z.string().min(3),
    private_key: pem('private key'),
    private_key_id: z.string().optional(),
    scope: z.string().min(1),
    /** The user the service account acts as (domain-wide delegation). */
    subject: z.string().min(3).optional(),
  }),
  z.object({
    kind: z.literal('refresh_token'),
    token_url: url,
    client_id: z.string().min(1),
    client_secret: z.string().min(1).optional(),
    refresh_token: z.string().min(1),
    scope: z.string().min(1).optional(),
  }),
]);
export type OAuthGrant = z.output<typeof OAuthGrant>;
/** An OAuth grant as written in the settings (defaults not yet applied). */
export type OAuthGrantInput = z.input<typeof OAuthGrant>;

/** A Google service account key file (the JSON the Cloud console hands out). */
const ServiceAccountKey = z.object({
  type: z.literal('service_account').optional(),
  client_email: z.string().min(3),
  private_key: pem('private key'),
  private_key_id: z.string().optional(),
  token_uri: url.optional(),
});

/** A setting holding a service account key file's JSON. */
export const ServiceAccountKeyJson = jsonText(
  ServiceAccountKey,
  'must be the JSON key file of a service account',
);

/** The answer of a token endpoint (RFC 6749 5.1). */
export const TokenAnswer = z.object({
  access_token: z.string().min(1).max(16_384),
  token_type: z.string().optional(),
  expires_in: z.coerce.number().int().positive().max(31_536_000).optional(),
  refresh_token: z.string().min(1).optional(),
});

/** An error answer of a token endpoint (RFC 6749 5.2, with Microsoft's additions). */
export const TokenErrorAnswer = z.object({
  error: z.string().max(200),
  error_description: z.string().optional(),
  error_codes: z.array(z.number()).optional(),
});
export type TokenErrorAnswer = z.infer<typeof TokenErrorAnswer>;

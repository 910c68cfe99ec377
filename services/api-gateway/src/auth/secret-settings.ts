/**
 * Secrets in plugin settings (an LLM API key, a vendor token) go only to the plugin that owns them:
 * everyone else, admins included, reads `***` in their place (docs/security.md, "Plugin settings").
 * A setting is secret by its key, at any depth: one of the words below as a word of the key
 * (`api_key`, `llmApiKey`, `vendor_token`, `client_secret`, `smtp_password`, `credentials`), never
 * as a part of one (`max_tokens`, `tokenizer` stay readable); a key ending in `file` or `path`
 * names where a secret is kept (`api_key_file`) and stays readable.
 */
const REDACTED = '***';

const SECRET_WORDS = new Set([
  'password',
  'passwd',
  'passphrase',
  'secret',
  'token',
  'apikey',
  'credential',
  'credentials',
  'auth',
  'authorization',
  'cookie',
]);
/** Two words that make a secret together (`api_key`, `private-key`, `accessKey`). */
const SECRET_PAIRS = new Set(['api key', 'private key', 'access key', 'secret key', 'signing key']);

function wordsOf(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0);
}

/** Last words naming where a secret is, not the secret (`api_key_file`: a path). */
const REFERENCE_WORDS = new Set(['file', 'path']);

function isSecretKey(key: string): boolean {
  const words = wordsOf(key);
  if (REFERENCE_WORDS.has(words[words.length - 1] ?? '')) return false;
  for (let i = 0; i < words.length; i++) {
    if (SECRET_WORDS.has(words[i] as string)) return true;
    if (i > 0 && SECRET_PAIRS.has(`${words[i - 1]} ${words[i]}`)) return true;
  }
  return false;
}

const MAX_DEPTH = 32;

/** A copy of `value` with every secret setting's value replaced by `***` (null and '' kept: unset). */
export function redactSecrets(value: unknown, depth = 0): unknown {
  if (depth > MAX_DEPTH) return REDACTED;
  if (Array.isArray(value)) return value.map((v) => redactSecrets(v, depth + 1));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] =
      isSecretKey(k) && v !== null && v !== '' && typeof v !== 'boolean'
        ? REDACTED
        : redactSecrets(v, depth + 1);
  }
  return out;
}

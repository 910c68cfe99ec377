import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { THREAT_INTEL_ERROR_CODES as CODES, FeedError } from './errors.ts';
import type { FeedBuilder } from './feed-data.ts';
import { type FetchLike, fetchFeedText, sourceChild } from './fetch.ts';
import type { MispSettings } from './settings.ts';

/** A MISP attribute as feeds and restSearch write it (only the members read here). */
const MispAttribute = z.object({
  type: z.string(),
  value: z.string(),
  to_ids: z.union([z.boolean(), z.string(), z.number()]).optional(),
  deleted: z.union([z.boolean(), z.string(), z.number()]).optional(),
});

const truthy = (v: unknown) => v === true || v === 1 || v === '1' || v === 'true';

/** A feed's event file: `{Event: {Attribute: [...], Object: [{Attribute: [...]}]}}`. */
const MispEventFile = z.object({
  Event: z.object({
    Attribute: z.array(z.unknown()).default([]),
    Object: z.array(z.object({ Attribute: z.array(z.unknown()).default([]) })).default([]),
  }),
});

/** A feed's `manifest.json`: event uuid → summary (only `timestamp` is read, to take the newest). */
const Manifest = z.record(
  z.string(),
  z.object({ timestamp: z.union([z.string(), z.number()]).optional() }).loose(),
);

/** restSearch answer: `{response: {Attribute: [...]}}`. */
const RestSearchAnswer = z.object({
  response: z.object({ Attribute: z.array(z.unknown()).default([]) }),
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Adds the attributes of the types Trawl matches: url/uri, domain/hostname, md5/sha1/sha256,
 * ip-dst, and the composite types split at `|` (`filename|sha256`, `domain|ip`, `hostname|port`,
 * `ip-dst|port`). Deleted attributes are skipped, and those not marked `to_ids` when asked.
 */
async function addMispAttributes(
  items: readonly unknown[],
  b: FeedBuilder,
  toIdsOnly: boolean,
): Promise<void> {
  for (const item of items) {
    await b.tick();
    const r = MispAttribute.safeParse(item);
    if (!r.success) {
      b.skipped++;
      continue;
    }
    const a = r.data;
    if (truthy(a.deleted) || (toIdsOnly && a.to_ids !== undefined && !truthy(a.to_ids))) continue;
    const [left = '', right = ''] = a.value.split('|');
    switch (a.type) {
      case 'url':
      case 'uri':
        b.addUrl(a.value);
        break;
      case 'domain':
      case 'hostname':
      case 'ip-dst':
        b.addHost(a.value);
        break;
      case 'md5':
      case 'sha1':
      case 'sha256':
        b.addHash(a.value);
        break;
      case 'domain|ip':
        b.addHost(left);
        b.addHost(right);
        break;
      case 'hostname|port':
      case 'ip-dst|port':
        b.addHost(left);
        break;
      case 'filename|md5':
      case 'filename|sha1':
      case 'filename|sha256':
        b.addHash(right);
        break;
      default:
        break; // a type Trawl does not match (email-src, regkey, …)
    }
  }
}

export interface MispLoadOptions {
  feed: string;
  timeoutMs: number;
  maxBytes: number;
  maxEvents: number;
  toIdsOnly: boolean;
  signal?: AbortSignal | undefined;
  fetch?: FetchLike | undefined;
}

function parseJson(text: string, feed: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new FeedError(CODES.invalid, feed, `${what} is not valid JSON: ${(e as Error).message}`);
  }
}

/**
 * A MISP feed (the format MISP's own "feeds" consume): `manifest.json`, then `<uuid>.json` for
 * each event it lists, newest first, at most `maxEvents`, all files together within `maxBytes`.
 * An event file that fails is skipped and counted (`note`); if every one fails, the load fails.
 */
export async function loadMispFeed(
  base: string,
  b: FeedBuilder,
  o: MispLoadOptions,
): Promise<void> {
  let budget = o.maxBytes;
  const get = async (name: string) => {
    const text = await fetchFeedText(sourceChild(base, name), {
      feed: o.feed,
      timeoutMs: o.timeoutMs,
      maxBytes: budget,
      signal: o.signal,
      fetch: o.fetch,
    });
    budget -= Buffer.byteLength(text);
    return text;
  };
  const manifest = Manifest.safeParse(
    parseJson(await get('manifest.json'), o.feed, 'manifest.json'),
  );
  if (!manifest.success)
    throw new FeedError(CODES.invalid, o.feed, 'manifest.json is not a MISP feed manifest');
  const uuids = Object.entries(manifest.data)
    .filter(([uuid]) => UUID.test(uuid)) // the names become paths: nothing else is fetched
    .sort((x, y) => Number(y[1].timestamp ?? 0) - Number(x[1].timestamp ?? 0))
    .slice(0, o.maxEvents)
    .map(([uuid]) => uuid);
  let failed = 0;
  let firstError: FeedError | undefined;
  for (const uuid of uuids) {
    let file: z.output<typeof MispEventFile>;
    try {
      const r = MispEventFile.safeParse(
        parseJson(await get(`${uuid}.json`), o.feed, `${uuid}.json`),
      );
      if (!r.success)
        throw new FeedError(CODES.invalid, o.feed, `${uuid}.json is not a MISP event`);
      file = r.data;
    } catch (e) {
      const err = e as FeedError;
      // over budget or cancelled: the whole load fails (a partial feed would silently shrink)
      if (err.code === CODES.tooLarge || o.signal?.aborted) throw err;
      failed++;
      firstError ??= err;
      continue;
    }
    await addMispAttributes(file.Event.Attribute, b, o.toIdsOnly);
    for (const obj of file.Event.Object) await addMispAttributes(obj.Attribute, b, o.toIdsOnly);
  }
  if (uuids.length > 0 && failed === uuids.length && firstError) throw firstError;
  if (failed > 0) b.note = `${failed} of ${uuids.length} event files could not be read`;
}

export interface MispApiOptions {
  timeoutMs: number;
  maxBytes: number;
  signal?: AbortSignal | undefined;
  fetch?: FetchLike | undefined;
}

/** The API key from `api_key_file` (trimmed). Never logged; errors name the setting, not the key. */
async function readMispKey(s: MispSettings): Promise<string> {
  if (!s.api_key_file)
    throw new FeedError(CODES.mispRejected, s.name, 'misp.api_key_file is not set', {
      retryable: false,
    });
  let key: string;
  try {
    key = (await readFile(s.api_key_file, 'utf8')).trim();
  } catch (e) {
    throw new FeedError(
      CODES.mispRejected,
      s.name,
      `misp.api_key_file cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
      { retryable: false },
    );
  }
  if (key === '' || /[\r\n]/.test(key))
    throw new FeedError(CODES.mispRejected, s.name, 'misp.api_key_file holds no single-line key', {
      retryable: false,
    });
  return key;
}

/**
 * The attributes of a MISP instance by its REST API: `POST <url>/attributes/restSearch` with the
 * key in the `Authorization` header and `{returnFormat: 'json', type, to_ids, last, limit, page,
 * deleted: false}`, page after page until a short page or `max_pages`. All pages count against one
 * size budget.
 */
export async function loadMispApi(
  s: MispSettings,
  b: FeedBuilder,
  o: MispApiOptions,
): Promise<void> {
  const key = await readMispKey(s);
  const url = new URL(
    'attributes/restSearch',
    s.url.endsWith('/') ? s.url : `${s.url}/`,
  ).toString();
  let budget = o.maxBytes;
  for (let page = 1; page <= s.max_pages; page++) {
    const body = {
      returnFormat: 'json',
      type: s.types,
      last: s.last,
      limit: s.page_size,
      page,
      deleted: false,
      ...(s.to_ids ? { to_ids: true } : {}),
    };
    const text = await fetchFeedText(url, {
      feed: s.name,
      timeoutMs: o.timeoutMs,
      maxBytes: budget,
      method: 'POST',
      headers: {
        authorization: key,
        accept: 'application/json',
        'content-type': 'application/json',
      },
      body: JSON.stringify(body),
      authenticated: true,
      signal: o.signal,
      fetch: o.fetch,
    });
    budget -= Buffer.byteLength(text);
    const r = RestSearchAnswer.safeParse(parseJson(text, s.name, 'the restSearch answer'));
    if (!r.success)
      throw new FeedError(CODES.invalid, s.name, 'the restSearch answer has no response.Attribute');
    const attrs = r.data.response.Attribute;
    await addMispAttributes(attrs, b, s.to_ids);
    if (attrs.length < s.page_size) return;
  }
  b.note = `stopped after max_pages (${s.max_pages}) pages`;
}

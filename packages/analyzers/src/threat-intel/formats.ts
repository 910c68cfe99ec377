import { csvFields } from '../shared/csv.ts';
import { THREAT_INTEL_ERROR_CODES as CODES, FeedError } from './errors.ts';
import type { FeedBuilder } from './feed-data.ts';

/** Each line of `text` without its line break (no array of a million lines is built). */
function* lines(text: string): Generator<string> {
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    const line =
      text.charCodeAt(end - 1) === 13 ? text.slice(start, end - 1) : text.slice(start, end);
    start = end + 1;
    yield line;
  }
}

/** Plain lists (OpenPhish, URLhaus text, domain and hash lists): one entry a line, `#` comments. */
export async function parseList(
  text: string,
  kind: 'url' | 'host' | 'hash',
  b: FeedBuilder,
): Promise<void> {
  for (const raw of lines(text)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    // hash lists often carry a file name after the hash (sha256sum output)
    const entry = kind === 'url' ? line : (line.split(/[\s,;]+/)[0] ?? '');
    if (kind === 'url') b.addUrl(entry);
    else if (kind === 'host') b.addHost(entry);
    else b.addHash(entry);
    await b.tick();
  }
}

function refusedWhen(flag: unknown): boolean {
  return flag === false || flag === 'no' || flag === 'false';
}

/**
 * PhishTank's database dump, `online-valid.json` (an array of `{phish_id, url, verified, online,
 * target, …}`) or `online-valid.csv` (header `phish_id,url,phish_detail_url,submission_time,
 * verified,verification_time,online,target`). An entry PhishTank says is not verified or offline
 * is left out.
 */
export async function parsePhishTank(text: string, b: FeedBuilder, feed: string): Promise<void> {
  const head = text.trimStart();
  if (head.startsWith('[') || head.startsWith('{')) {
    let data: unknown;
    try {
      data = JSON.parse(head);
    } catch (e) {
      throw new FeedError(CODES.invalid, feed, `is not valid JSON: ${(e as Error).message}`);
    }
    if (!Array.isArray(data))
      throw new FeedError(CODES.invalid, feed, 'is not a PhishTank JSON dump (an array)');
    for (const e of data) {
      const entry = e as { url?: unknown; verified?: unknown; online?: unknown } | null;
      if (!entry || typeof entry.url !== 'string') b.skipped++;
      else if (!refusedWhen(entry.verified) && !refusedWhen(entry.online)) b.addUrl(entry.url);
      await b.tick();
    }
    return;
  }
  let header: string[] | undefined;
  let urlCol = -1;
  for (const raw of lines(text)) {
    const line = raw.trim();
    if (line === '') continue;
    const row = csvFields(line);
    if (!header) {
      header = row.map((h) => h.trim().toLowerCase());
      urlCol = header.indexOf('url');
      if (urlCol < 0)
        throw new FeedError(CODES.invalid, feed, 'is not a PhishTank CSV dump (no url column)');
      continue;
    }
    const col = (name: string) => row[header?.indexOf(name) ?? -1];
    if (!refusedWhen(col('verified')) && !refusedWhen(col('online'))) b.addUrl(row[urlCol] ?? '');
    await b.tick();
  }
  if (!header) throw new FeedError(CODES.invalid, feed, 'is empty');
}

/**
 * URLhaus CSV exports: a `#` comment block whose last line names the columns
 * (`# id,dateadded,url,url_status,last_online,threat,tags,urlhaus_link,reporter`; older exports
 * lack `last_online`), then one quoted row per URL.
 */
export async function parseUrlhaus(text: string, b: FeedBuilder, feed: string): Promise<void> {
  let urlCol = 2;
  let rows = 0;
  for (const raw of lines(text)) {
    const line = raw.trim();
    if (line === '') continue;
    if (line.startsWith('#')) {
      const cols = csvFields(line.slice(1).trim()).map((c) => c.trim().toLowerCase());
      if (cols.includes('url') && cols.includes('id')) urlCol = cols.indexOf('url');
      continue;
    }
    rows++;
    b.addUrl(csvFields(line)[urlCol] ?? '');
    await b.tick();
  }
  if (rows > 0 && b.entries === 0)
    throw new FeedError(CODES.invalid, feed, 'has rows but no URL in its url column');
}

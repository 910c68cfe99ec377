import { readFile } from 'node:fs/promises';
import { describeAnswer, fetchBounded, PeerAnswerError } from '@trawl/contracts';
import { EVAL_ENVELOPE } from './eval-message.ts';

/**
 * A peer filter the eval compares Trawl with, on the same messages: today Rspamd, over its normal
 * worker's HTTP protocol (`POST /checkv2`, body = the raw message; the reply is JSON with `action`,
 * `score`, `required_score`, `is_skipped`, …).
 *
 * Mapping: Rspamd's actions `reject`, `add header` and `rewrite subject` (the message is treated as
 * spam) count as a positive ("phishing") verdict; `no action`, `greylist` and `soft reject` (a
 * temporary refusal, e.g. rate limits) as negative. A skipped message (`is_skipped`), an error or a
 * timeout counts as negative and is reported.
 */
const RSPAMD_POSITIVE_ACTIONS: ReadonlySet<string> = new Set([
  'reject',
  'add header',
  'rewrite subject',
]);

export interface PeerVerdict {
  positive: boolean;
  action?: string;
  score?: number;
  required?: number;
  skipped?: boolean;
  error?: string;
}

export interface PeerSpec {
  name: string;
  url: string;
}

/** `rspamd=http://127.0.0.1:11333` → { name: 'rspamd', url }. Only rspamd is known. */
export function parsePeer(arg: string): PeerSpec {
  const at = arg.indexOf('=');
  const name = at > 0 ? arg.slice(0, at) : '';
  const url = arg.slice(at + 1);
  if (name !== 'rspamd') throw new Error(`--peer ${arg}: expected rspamd=URL`);
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`--peer ${arg}: not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new Error(`--peer ${arg}: http(s) URL expected`);
  return { name, url: u.toString() };
}

/** The /checkv2 endpoint of an Rspamd base URL (kept when the URL already names it). */
export function checkUrl(base: string): string {
  const u = new URL(base);
  if (!u.pathname.endsWith('/checkv2')) u.pathname = `${u.pathname.replace(/\/+$/, '')}/checkv2`;
  return u.toString();
}

/** Reads Rspamd's /checkv2 JSON reply. */
export function rspamdVerdict(json: unknown): PeerVerdict {
  if (!json || typeof json !== 'object')
    return { positive: false, error: 'reply is not an object' };
  const j = json as Record<string, unknown>;
  const num = (x: unknown) => (typeof x === 'number' ? x : undefined);
  const skipped = j.is_skipped === true;
  const action = typeof j.action === 'string' ? j.action : undefined;
  const v: PeerVerdict = {
    positive: !skipped && action !== undefined && RSPAMD_POSITIVE_ACTIONS.has(action),
  };
  if (action !== undefined) v.action = action;
  const score = num(j.score);
  if (score !== undefined) v.score = score;
  const required = num(j.required_score);
  if (required !== undefined) v.required = required;
  if (skipped) v.skipped = true;
  if (action === undefined && !skipped)
    v.error = typeof j.error === 'string' ? j.error : 'reply has no action';
  return v;
}

/** Sends one raw message to Rspamd's /checkv2. Never throws: a failure is a verdict with `error`. */
async function checkRspamd(
  endpoint: string,
  raw: Uint8Array,
  o: { timeoutMs: number },
): Promise<PeerVerdict> {
  try {
    const res = await fetchBounded(
      endpoint,
      {
        method: 'POST',
        body: raw,
        // the envelope recipient Trawl's eval parses every message with
        headers: { 'content-type': 'message/rfc822', rcpt: EVAL_ENVELOPE.to[0] },
      },
      { maxBytes: 1024 * 1024, timeoutMs: o.timeoutMs, errorBytes: 512 },
    );
    if (res.status < 200 || res.status > 299)
      return { positive: false, error: describeAnswer(res, 120) };
    const text = res.body.toString('utf8');
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return { positive: false, error: 'reply is not JSON' };
    }
    return rspamdVerdict(json);
  } catch (err) {
    const e = err as Error;
    return {
      positive: false,
      error:
        e instanceof PeerAnswerError && e.kind === 'timeout'
          ? `timeout after ${o.timeoutMs} ms`
          : e.message,
    };
  }
}

export interface PeerRun {
  name: string;
  verdicts: PeerVerdict[];
  seconds: number;
  msgsPerS: number;
  errors: number;
  skipped: number;
  concurrency: number;
}

/**
 * Sends every message (by path, read as raw bytes) to the peer, at most `concurrency` at a time,
 * each with a timeout; verdicts in the order of `paths`.
 */
export async function runPeer(
  peer: PeerSpec,
  paths: readonly string[],
  o: {
    concurrency?: number;
    timeoutMs?: number;
    onProgress?: (done: number, total: number) => void;
  } = {},
): Promise<PeerRun> {
  const endpoint = checkUrl(peer.url);
  const concurrency = Math.max(1, o.concurrency ?? 8);
  const timeoutMs = o.timeoutMs ?? 30_000;
  const verdicts: PeerVerdict[] = new Array(paths.length);
  let next = 0;
  let done = 0;
  const t0 = performance.now();
  const lane = async () => {
    for (;;) {
      const i = next++;
      if (i >= paths.length) return;
      let v: PeerVerdict;
      try {
        v = await checkRspamd(endpoint, await readFile(paths[i]!), { timeoutMs });
      } catch (err) {
        v = { positive: false, error: (err as Error).message };
      }
      verdicts[i] = v;
      o.onProgress?.(++done, paths.length);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, paths.length || 1) }, lane));
  const seconds = (performance.now() - t0) / 1000;
  return {
    name: peer.name,
    verdicts,
    seconds,
    msgsPerS: paths.length / Math.max(seconds, 1e-9),
    errors: verdicts.filter((v) => v.error).length,
    skipped: verdicts.filter((v) => v.skipped).length,
    concurrency,
  };
}

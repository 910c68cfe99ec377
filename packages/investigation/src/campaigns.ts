import type { AnalysisResult, Email, Evidence } from '@trawl/contracts';
import { errorText } from '@trawl/contracts';
import { htmlToText, registrableDomain } from '@trawl/mail';
import {
  type CampaignAssignment,
  type CampaignRepository,
  emitEventsSql,
  type LureInput,
  MINHASH_BAND_ROWS,
  MINHASH_SIZE,
  type SqlClient,
  webhookEventId,
  webhookPayload,
} from '@trawl/platform';
import type { Logger } from 'pino';

/**
 * Campaigns (issue 16, docs/investigation.md): the lure of a finished suspicious job, as keys that
 * another message of the same campaign would share, and its grouping by the store. After the job is
 * settled: one pass over the evidence the job already has and over at most TEXT_MAX_CHARS of its
 * text, no SQL when the job cannot join a campaign; in the background, the jobs finished meanwhile
 * grouped together (createCampaignGrouper: one or two statements a batch, one lock for the jobs
 * that share a lure).
 *
 * Keys: `dom:<registrable domain>` of each link (anchors, forms, URLs in the text: not images or
 * style sheets), except the sender's own domain, the recipients' domains and BIG_PLATFORMS (there,
 * `url:<the URL>` when it has a path: the same document link is a lure, the platform is not); on
 * HOSTING_PLATFORMS the customer's host (`dom:<host>`); `sha:<sha256>` of each attachment but inline images (logos);
 * `txt<band>:<hex>` — the eight bands (4 values each) of a 32-value MinHash signature of the text's
 * word pairs: two texts of Jaccard similarity 0.8 share a band with probability 0.98, two unrelated
 * texts about never; the store confirms a band match by the whole signatures (MIN_TEXT_SIMILARITY).
 */

/**
 * Registrable domains that host everyone's content: a link there tells nothing about a campaign.
 * Mail providers, office suites, file sharing, social networks, link shorteners, big CDNs and
 * e-mail service providers (tracking links), and the web standards' own domains.
 */
const BIG_PLATFORMS: ReadonlySet<string> = new Set([
  'google.com',
  'googleusercontent.com',
  'googleapis.com',
  'gstatic.com',
  'goo.gl',
  'youtube.com',
  'youtu.be',
  'gmail.com',
  'microsoft.com',
  'office.com',
  'office365.com',
  'live.com',
  'outlook.com',
  'sharepoint.com',
  'onedrive.com',
  '1drv.ms',
  'windows.net',
  'azureedge.net',
  'microsoftonline.com',
  'apple.com',
  'icloud.com',
  'amazon.com',
  'amazonaws.com',
  'cloudfront.net',
  'akamaihd.net',
  'cloudflare.com',
  'facebook.com',
  'fb.me',
  'instagram.com',
  'linkedin.com',
  'twitter.com',
  'x.com',
  't.co',
  'bit.ly',
  'tinyurl.com',
  'ow.ly',
  'is.gd',
  'rebrand.ly',
  'dropbox.com',
  'box.com',
  'wetransfer.com',
  'github.com',
  'yahoo.com',
  'list-manage.com',
  'mailchimp.com',
  'sendgrid.net',
  'mandrillapp.com',
  'mailgun.org',
  'hubspot.com',
  'salesforce.com',
  'docusign.net',
  'docusign.com',
  'adobe.com',
  'w3.org',
  'schema.org',
  'wikipedia.org',
  'wikimedia.org',
  'klaviyo.com',
  'shopify.com',
  'mcusercontent.com',
  'awstrack.me',
  'pstmrk.it',
  'activehosted.com',
  'secureserver.net',
  'sendibt3.com',
  'constantcontact.com',
  'shorturl.at',
  't.ly',
  'cutt.ly',
  'tiny.cc',
  'qrco.de',
  'zupimages.net',
  'imgur.com',
  'twimg.com',
]);

/**
 * Registrable domains whose subdomains are their customers' sites (hosting, serverless, site
 * builders, object storage): there the lure is the host (`dom:<full host>`), not the platform.
 */
const HOSTING_PLATFORMS: ReadonlySet<string> = new Set([
  'run.app',
  'web.app',
  'firebaseapp.com',
  'appspot.com',
  'herokuapp.com',
  'netlify.app',
  'vercel.app',
  'pages.dev',
  'workers.dev',
  'r2.dev',
  'github.io',
  'gitlab.io',
  'blogspot.com',
  'wordpress.com',
  'wixsite.com',
  'weebly.com',
  'godaddysites.com',
  'webflow.io',
  'glitch.me',
  'ngrok.io',
  'ngrok-free.app',
  'azurewebsites.net',
  'square.site',
  'mystrikingly.com',
  'framer.website',
  'co.ua',
]);

/**
 * Where a URL is a link a person follows (the lure): anchors, image maps, form targets, refreshes and
 * URLs written in the text. Images, style sheets and other loaded resources are where a sender
 * hosts its pictures, shared by unrelated senders (image hosts, CDNs, fonts).
 */
const LINK_ELEMENTS: ReadonlySet<string> = new Set(['href', 'area', 'form', 'meta', 'text']);

/** Characters of text read for the signature (the head of a message is where its lure is). */
const TEXT_MAX_CHARS = 8192;
/** Fewer distinct words than this: no text key (short texts are alike by chance). */
const TEXT_MIN_WORDS = 12;
/** At most this many domain / URL keys per job. */
const MAX_URL_KEYS = 32;

/** What groups a job into campaigns: its keys (domains, URLs, text) and its text's MinHash signature. */
export interface Lure {
  keys: string[];
  /** The text's MinHash signature, carried by its `txt` keys. */
  signature?: string;
}

/** A job worth grouping: its verdict is phishing, or at least worth a look (threat above none). */
export function isSuspicious(r: Pick<AnalysisResult, 'is_phishing' | 'threat_level'>): boolean {
  return r.is_phishing || r.threat_level !== 'none';
}

function domainOf(address: string): string | undefined {
  const at = address.lastIndexOf('@');
  if (at === -1) return undefined;
  return registrableDomain(address.slice(at + 1).toLowerCase()) ?? undefined;
}

/** `https://Host/path?q#frag` → `host/path?q` (scheme, case of the host, fragment, final `/` dropped). */
function urlKeyOf(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
  const path = u.pathname.endsWith('/') ? u.pathname.slice(0, -1) : u.pathname;
  const rest = `${path}${u.search}`;
  // the platform's own pages (`/`, `/login`) are everyone's; a document's link has a longer path
  if (rest.length < 8) return undefined;
  return `${u.hostname.toLowerCase()}${rest}`.slice(0, 512);
}

function isWordChar(c: number): boolean {
  return (
    (c >= 0x61 && c <= 0x7a) ||
    (c >= 0xdf && c <= 0x24f && c !== 0xf7) ||
    (c >= 0x400 && c <= 0x4ff)
  );
}

function isBlank(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0x0c || c === 0xa0;
}

/** Murmur3's 32-bit finaliser: spreads a hash's bits (one hash function per seed). */
function mix32(x: number): number {
  let h = x;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** One seed per value of the signature (fixed: signatures of every replica and release agree). */
const SEEDS = Array.from({ length: MINHASH_SIZE }, (_, i) => mix32(0x9e3779b9 + i * 0x7f4a7c15));

/**
 * Calls `each` with the FNV-1a hash of every word of a text as the signature reads them (see
 * textSignature); one pass, no copy of the words.
 */
function forEachWordHash(text: string, each: (h: number) => void): void {
  const n = Math.min(text.length, TEXT_MAX_CHARS);
  let start = -1;
  let h = 0;
  for (let i = 0; i <= n; i++) {
    let c = i < n ? text.charCodeAt(i) : 0x20;
    if (c >= 0x41 && c <= 0x5a) c += 0x20;
    else if (c >= 0xc0 && c <= 0xde && c !== 0xd7) c += 0x20;
    if (isWordChar(c)) {
      if (start === -1) {
        // a link is keyed apart (its domain): its words are not the text's
        if (isLinkAt(text, i)) {
          while (i < n && !isBlank(text.charCodeAt(i))) i++;
          continue;
        }
        start = i;
        h = 0x811c9dc5;
      }
      h = Math.imul(h ^ c, 0x01000193);
      continue;
    }
    if (start !== -1) {
      const len = i - start;
      if (len >= 2 && len <= 30) each(h >>> 0);
      start = -1;
    }
  }
}

/** `http://`, `https://` or `www.` (any case) starts at i. */
function isLinkAt(s: string, i: number): boolean {
  const c = s.charCodeAt(i) | 0x20;
  if (c !== 0x68 && c !== 0x77) return false;
  const head = s.slice(i, i + 8).toLowerCase();
  return head.startsWith('http://') || head.startsWith('https://') || head.startsWith('www.');
}

/**
 * MinHash signature of a text (MINHASH_SIZE values, 8 hex digits each): over the set of its word
 * pairs, where words are letter runs of 2–30 characters, case-folded, outside links (digits and
 * amounts drop out; links are keyed by their domain). The share of equal values of two signatures
 * estimates the Jaccard similarity of the two sets. Undefined for a text of fewer than
 * TEXT_MIN_WORDS distinct words (short texts are alike by chance). At most TEXT_MAX_CHARS read.
 */
export function textSignature(text: string): string | undefined {
  const distinct = new Set<number>();
  const shingles = new Set<number>();
  let prev = -1;
  forEachWordHash(text, (h) => {
    distinct.add(h);
    if (prev !== -1) shingles.add(mix32(Math.imul(prev, 0x9e3779b1) ^ h));
    prev = h;
  });
  if (distinct.size < TEXT_MIN_WORDS) return undefined;
  const mins = new Uint32Array(MINHASH_SIZE).fill(0xffffffff);
  for (const h of shingles) {
    for (let k = 0; k < MINHASH_SIZE; k++) {
      const v = mix32(h ^ (SEEDS[k] as number));
      if (v < (mins[k] as number)) mins[k] = v;
    }
  }
  let out = '';
  for (const v of mins) out += v.toString(16).padStart(8, '0');
  return out;
}

/** The lure keys of a message (see the module comment). */
export function lureOf(email: Email, evidence: Evidence): Lure {
  const own = new Set<string>();
  const sender = domainOf(evidence.message.from.address);
  if (sender) own.add(sender);
  for (const r of [...evidence.message.to, ...evidence.message.cc, ...evidence.message.bcc]) {
    const d = domainOf(r);
    if (d) own.add(d);
  }
  const keys = new Set<string>();
  let urlKeys = 0;
  for (const u of evidence.urls) {
    if (urlKeys >= MAX_URL_KEYS) break;
    const host = u.host.toLowerCase();
    if (!host || !LINK_ELEMENTS.has(u.element)) continue;
    const rd = (u.registrable_domain ?? host).toLowerCase();
    if (own.has(rd)) continue;
    let key: string | undefined;
    if (HOSTING_PLATFORMS.has(rd)) {
      if (host !== rd && !host.startsWith('www.')) key = `dom:${host}`;
    } else if (BIG_PLATFORMS.has(rd)) {
      const k = urlKeyOf(u.url);
      if (k) key = `url:${k}`;
    } else if (u.url.startsWith('http:') || u.url.startsWith('https:')) {
      key = `dom:${rd}`;
    }
    if (key && !keys.has(key)) {
      keys.add(key);
      urlKeys++;
    }
  }
  const atts = email.attachments ?? [];
  evidence.attachments.forEach((a, i) => {
    if (!a.sha256 || a.size === 0) return;
    const src = atts[i];
    const inlineImage =
      src?.content_id !== undefined &&
      (a.declared_type.startsWith('image/') || (a.sniffed_type ?? '').startsWith('image/'));
    if (!inlineImage) keys.add(`sha:${a.sha256}`);
  });
  const text =
    email.body_text && email.body_text.trim().length > 0
      ? email.body_text
      : email.body_html
        ? htmlToText(
            email.body_html.length > TEXT_MAX_CHARS * 4
              ? email.body_html.slice(0, TEXT_MAX_CHARS * 4)
              : email.body_html,
          )
        : '';
  const signature = textSignature(text);
  if (signature) {
    const w = MINHASH_BAND_ROWS * 8;
    for (let b = 0; b * w < signature.length; b++) {
      keys.add(`txt${b}:${signature.slice(b * w, b * w + w)}`);
    }
  }
  return signature ? { keys: [...keys], signature } : { keys: [...keys] };
}

export interface CampaignDeps {
  campaigns: CampaignRepository;
  /** Where `campaign.updated` webhook events are written (the store's SQL client). */
  sql?: SqlClient | undefined;
}

/** The lure to group a finished job by; undefined when it cannot join a campaign (no SQL then). */
function lureToGroup(
  jobId: string,
  email: Email,
  result: AnalysisResult,
  reported = false,
): LureInput | undefined {
  const evidence = result.evidence;
  if (!evidence || (!isSuspicious(result) && !reported)) return undefined;
  const lure = lureOf(email, evidence);
  if (lure.keys.length === 0) return undefined;
  const m = evidence.message;
  // what the store would otherwise read back from the stored evidence
  return { job_id: jobId, ...lure, recipients: [...m.to, ...m.cc, ...m.bcc], subject: m.subject };
}

/**
 * Logs and announces the campaigns that gained members (after the change is stored): one
 * `campaign.updated` webhook event each, the batch's events written by one statement.
 */
async function announce(
  deps: CampaignDeps,
  grouped: { a: CampaignAssignment | null; log: Logger }[],
): Promise<void> {
  const events: { id: string; type: string; payload: unknown }[] = [];
  for (const { a, log } of grouped) {
    if (!a || a.joined.length === 0) continue;
    log.info(
      { campaign: a.campaign.id, size: a.campaign.size, joined: a.joined.length },
      a.created ? 'campaign started' : 'campaign grew',
    );
    // THE call site of the `campaign.updated` webhook event (docs/investigation.md): once per
    // campaign that gained members, after the change is stored.
    const data = { campaign: a.campaign, joined: a.joined, merged: a.merged, created: a.created };
    events.push({
      id: webhookEventId(),
      type: 'campaign.updated',
      payload: webhookPayload('campaign.updated', data),
    });
  }
  if (deps.sql) await emitEventsSql(deps.sql, events);
}

/** Groups finished jobs into campaigns in the background, per batch. */
export interface CampaignGrouper {
  /**
   * Queues a finished job to be grouped in the background (suspicious jobs, and reported ones whatever
   * their verdict); a job that cannot join a campaign is left out here, before any SQL. Never throws.
   */
  add(jobId: string, email: Email, result: AnalysisResult, log: Logger, reported?: boolean): void;
  /** Resolves once every job queued so far (and since, while waiting) is grouped. */
  settled(): Promise<void>;
  /** Waits for the queued jobs to be grouped, at most graceMs; logs what is left ungrouped. */
  drain(graceMs: number): Promise<void>;
  /** Jobs queued and not yet grouped. */
  pending(): number;
}

export interface CampaignGrouperOptions {
  /** Jobs queued at most; a job beyond is not grouped (logged). */
  maxQueued?: number;
  /** Jobs grouped by one call of the store (one or two statements, one lock when they match). */
  maxBatch?: number;
  /**
   * How long a batch that is not full waits for more jobs before it is grouped (ms; default 50).
   * Grouping is background work: a short wait lets a loaded orchestrator group several jobs per
   * statement instead of two or three, and an idle one groups a job 50 ms later.
   */
  lingerMs?: number;
}

/**
 * The orchestrator's background grouping (issue 16): one chain groups the finished jobs in their
 * order, as many as have queued meanwhile in one `assignMany` (group commit: a loaded orchestrator
 * pays one or two statements per batch, not per job; an idle one groups each job at once). A batch
 * that fails is grouped again job by job, so that one bad job does not leave the others ungrouped.
 * Bounded: a full queue, or a crash, leaves a job ungrouped (logged); `drain` on shutdown.
 */
export function createCampaignGrouper(
  deps: CampaignDeps,
  log: Logger,
  opts: CampaignGrouperOptions = {},
): CampaignGrouper {
  const maxQueued = opts.maxQueued ?? 5000;
  const maxBatch = Math.max(1, opts.maxBatch ?? 64);
  const lingerMs = Math.max(0, opts.lingerMs ?? 50);
  const queue: { lure: LureInput; log: Logger }[] = [];
  let inBatch = 0;
  let chain: Promise<void> | undefined;
  /** Ends the current batch's wait for more jobs at once (set while it waits). */
  let wake: (() => void) | undefined;

  async function group(batch: { lure: LureInput; log: Logger }[]): Promise<void> {
    let answers: (CampaignAssignment | null)[] | undefined;
    try {
      answers = await deps.campaigns.assignMany(batch.map((b) => b.lure));
    } catch (e) {
      if (batch.length === 1) {
        batch[0]?.log.warn({ err: errorText(e) }, 'could not group the job');
        return;
      }
      for (const b of batch) await group([b]);
      return;
    }
    const grouped = batch.map((b, i) => ({ a: answers?.[i] ?? null, log: b.log }));
    try {
      await announce(deps, grouped);
    } catch (e) {
      log.warn({ err: errorText(e), jobs: batch.length }, 'could not announce the grouped jobs');
    }
  }

  async function run(): Promise<void> {
    while (queue.length > 0) {
      if (lingerMs > 0 && queue.length < maxBatch) {
        // cut short when the batch fills meanwhile (add)
        await new Promise<void>((r) => {
          const t = setTimeout(() => {
            wake = undefined;
            r();
          }, lingerMs);
          wake = () => {
            clearTimeout(t);
            wake = undefined;
            r();
          };
        });
      }
      const batch = queue.splice(0, maxBatch);
      inBatch = batch.length;
      await group(batch).catch((e) => log.warn({ err: errorText(e) }, 'could not group jobs'));
      inBatch = 0;
    }
    chain = undefined;
  }

  async function settled(): Promise<void> {
    while (chain) await chain;
  }

  return {
    add(jobId, email, result, jlog, reported = false) {
      let lure: LureInput | undefined;
      try {
        lure = lureToGroup(jobId, email, result, reported);
      } catch (e) {
        jlog.warn({ err: errorText(e) }, 'could not group the job');
        return;
      }
      if (!lure) return;
      if (queue.length >= maxQueued) {
        log.warn({ queued: queue.length }, 'campaign queue full: a job is not grouped');
        return;
      }
      queue.push({ lure, log: jlog });
      if (queue.length >= maxBatch) wake?.();
      chain ??= run();
    },
    settled,
    async drain(graceMs) {
      if (!chain) return;
      wake?.();
      let t: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([settled(), new Promise((r) => (t = setTimeout(r, graceMs)))]);
      clearTimeout(t);
      const left = queue.length + inBatch;
      if (left > 0) log.warn({ ungrouped: left }, 'shutdown: jobs left ungrouped');
    },
    pending: () => queue.length + inBatch,
  };
}

import type { Email } from '@trawl/contracts';
import type { FeedStatus, IntelMatch, ThreatIntelData } from './data.ts';
import { THREAT_INTEL_ERROR_CODES as CODES, FeedError } from './errors.ts';
import { FeedBuilder, type FeedSnapshot } from './feed-data.ts';
import { type FetchLike, fetchFeedText } from './fetch.ts';
import { parseList, parsePhishTank, parseUrlhaus } from './formats.ts';
import { loadMispApi, loadMispFeed } from './misp.ts';
import { hashType } from './normalize.ts';
import { type Observables, observe } from './observe.ts';
import type { FeedSpec, ThreatIntelSettings } from './settings.ts';

export interface IntelLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

const silent: IntelLogger = { info() {}, warn() {} };

/** One thing loaded on a schedule: a feed, or the MISP instance. */
interface Source {
  name: string;
  format: string;
  /** Changes when what is loaded changes (source, format, limits): the old copy is then dropped. */
  contentKey: string;
  refreshMs: number;
  retryMs: number;
  load(signal: AbortSignal): Promise<FeedSnapshot>;
}

interface FeedState {
  source: Source;
  snapshot: FeedSnapshot | undefined;
  error: { code: string; message: string; at: string } | undefined;
  loading: Promise<void> | undefined;
  timer: NodeJS.Timeout | undefined;
  abort: AbortController;
}

export interface ThreatIntelDeps {
  /** The fetch used for feeds and MISP (tests may pass their own). Default: global fetch. */
  fetch?: FetchLike;
  log?: IntelLogger;
}

function sourcesOf(s: ThreatIntelSettings, fetch: FetchLike | undefined): Source[] {
  const limits = {
    timeoutMs: s.fetch_timeout_ms,
    maxBytes: s.max_feed_bytes,
    maxEntries: s.max_entries_per_feed,
  };
  const out: Source[] = [];
  for (const f of s.feeds) {
    if (!f.enabled) continue;
    const refreshMs = (f.refresh_seconds ?? s.refresh_seconds) * 1000;
    out.push({
      name: f.name,
      format: f.format,
      contentKey: JSON.stringify([
        f.format,
        f.source,
        limits,
        s.misp_feed_max_events,
        s.misp_feed_to_ids_only,
      ]),
      refreshMs,
      retryMs: Math.min(refreshMs, s.retry_seconds * 1000),
      load: (signal) => loadFeed(f, s, signal, fetch),
    });
  }
  if (s.misp.url) {
    const m = s.misp;
    const refreshMs = (m.refresh_seconds ?? s.refresh_seconds) * 1000;
    out.push({
      name: m.name,
      format: 'misp_api',
      contentKey: JSON.stringify([m, limits]),
      refreshMs,
      retryMs: Math.min(refreshMs, s.retry_seconds * 1000),
      load: async (signal) => {
        const b = new FeedBuilder(s.max_entries_per_feed);
        await loadMispApi(m, b, {
          timeoutMs: s.fetch_timeout_ms,
          maxBytes: s.max_feed_bytes,
          signal,
          fetch,
        });
        return b.build();
      },
    });
  }
  return out;
}

async function loadFeed(
  f: FeedSpec,
  s: ThreatIntelSettings,
  signal: AbortSignal,
  fetch: FetchLike | undefined,
): Promise<FeedSnapshot> {
  const b = new FeedBuilder(s.max_entries_per_feed);
  if (f.format === 'misp_feed') {
    await loadMispFeed(f.source, b, {
      feed: f.name,
      timeoutMs: s.fetch_timeout_ms,
      maxBytes: s.max_feed_bytes,
      maxEvents: s.misp_feed_max_events,
      toIdsOnly: s.misp_feed_to_ids_only,
      signal,
      fetch,
    });
  } else {
    const text = await fetchFeedText(f.source, {
      feed: f.name,
      timeoutMs: s.fetch_timeout_ms,
      maxBytes: s.max_feed_bytes,
      signal,
      fetch,
    });
    if (f.format === 'openphish' || f.format === 'url_list') await parseList(text, 'url', b);
    else if (f.format === 'domain_list') await parseList(text, 'host', b);
    else if (f.format === 'hash_list') await parseList(text, 'hash', b);
    else if (f.format === 'phishtank') await parsePhishTank(text, b, f.name);
    else await parseUrlhaus(text, b, f.name);
  }
  // a feed that lists nothing is an error page or a truncated download, not an all-clear
  if (b.entries === 0)
    throw new FeedError(
      CODES.invalid,
      f.name,
      `holds no usable ${f.format} entry${b.skipped ? ` (${b.skipped} lines not understood)` : ''}`,
    );
  if (b.dropped > 0 && !b.note)
    b.note = `${b.dropped} entries over max_entries_per_feed were dropped`;
  return b.build();
}

/**
 * The feeds of the threat-intel provider, kept loaded in memory. `configure` (called with each
 * request's settings; cheap when they did not change) starts loading new feeds in the background
 * and schedules each one's next load; `lookup` answers from what is loaded now and never waits
 * for a download. A load builds a whole new copy and swaps it in at once; a load that fails keeps
 * the last good copy and records the error.
 */
export class ThreatIntel {
  private readonly states = new Map<string, FeedState>();
  private settings: ThreatIntelSettings | undefined;
  private log: IntelLogger;
  private closed = false;

  constructor(private readonly deps: ThreatIntelDeps = {}) {
    this.log = deps.log ?? silent;
  }

  configure(s: ThreatIntelSettings, log?: IntelLogger): void {
    if (log && !this.deps.log) this.log = log;
    if (s === this.settings || this.closed) return;
    this.settings = s;
    const wanted = new Set<string>();
    for (const src of sourcesOf(s, this.deps.fetch)) {
      wanted.add(src.name);
      const st = this.states.get(src.name);
      if (st && st.source.contentKey === src.contentKey) {
        const rescheduled = st.source.refreshMs !== src.refreshMs;
        st.source = src;
        if (rescheduled && !st.loading) this.schedule(st, src.refreshMs);
        continue;
      }
      if (st) this.stop(st);
      const fresh: FeedState = {
        source: src,
        snapshot: undefined,
        error: undefined,
        loading: undefined,
        timer: undefined,
        abort: new AbortController(),
      };
      this.states.set(src.name, fresh);
      void this.load(fresh);
    }
    for (const [name, st] of this.states) {
      if (wanted.has(name)) continue;
      this.stop(st);
      this.states.delete(name);
    }
  }

  /** Loads every feed now (those already loading are awaited, not restarted). */
  async refreshNow(): Promise<void> {
    await Promise.all([...this.states.values()].map((st) => st.loading ?? this.load(st)));
  }

  /** Resolves when no load is running (tests). */
  async idle(): Promise<void> {
    for (;;) {
      const running = [...this.states.values()].flatMap((st) => (st.loading ? [st.loading] : []));
      if (running.length === 0) return;
      await Promise.all(running);
    }
  }

  close(): void {
    this.closed = true;
    for (const st of this.states.values()) this.stop(st);
    this.states.clear();
  }

  status(): FeedStatus[] {
    return [...this.states.values()].map((st) => ({
      name: st.source.name,
      format: st.source.format,
      loaded: st.snapshot !== undefined,
      entries: st.snapshot?.entries ?? 0,
      loaded_at: st.snapshot?.loadedAt.toISOString() ?? null,
      error: st.error ?? null,
      ...(st.snapshot?.note ? { note: st.snapshot.note } : {}),
    }));
  }

  /** The provider's answer for one message. */
  enrich(email: Email, maxUrls: number): ThreatIntelData {
    const feeds = this.status();
    const loaded = [...this.states.values()].filter((st) => st.snapshot !== undefined);
    if (loaded.length === 0)
      return {
        available: false,
        feeds,
        checked: { urls: 0, hosts: 0, attachments: 0 },
        matches: [],
      };
    const obs = observe(email, maxUrls);
    return {
      available: true,
      feeds,
      checked: {
        urls: obs.urls.length,
        hosts: obs.hosts.length,
        attachments: obs.attachments.length,
      },
      matches: this.lookup(obs),
    };
  }

  /** Matches of a message's URLs, hosts and attachment hashes against the loaded copies. */
  lookup(obs: Observables): IntelMatch[] {
    // one read of each feed's current copy: a reload swapping in mid-lookup changes nothing here
    const copies = [...this.states.values()].flatMap((st) =>
      st.snapshot ? [{ name: st.source.name, snap: st.snapshot }] : [],
    );
    const found = new Map<string, IntelMatch>();
    const hit = (key: string, m: Omit<IntelMatch, 'feeds'>, feed: string) => {
      const prev = found.get(key);
      if (prev) {
        if (!prev.feeds.includes(feed)) prev.feeds.push(feed);
      } else found.set(key, { ...m, feeds: [feed] });
    };
    for (const { name, snap } of copies) {
      if (snap.urls.size > 0) {
        for (const u of obs.urls) {
          if (
            snap.urls.has(u.keys.full) ||
            (u.keys.withoutQuery !== undefined && snap.urls.has(u.keys.withoutQuery))
          )
            hit(`url\u0000${u.keys.full}`, { kind: 'url', value: u.written.slice(0, 2048) }, name);
        }
      }
      if (snap.hosts.size > 0) {
        for (const h of obs.hosts) {
          // the most specific listed name of the host counts
          const listed = h.ladder.find((n) => snap.hosts.has(n));
          if (listed === undefined) continue;
          const kind = h.ip ? 'ip' : listed === h.registrable ? 'domain' : 'host';
          hit(`${kind}\u0000${listed}`, { kind, value: listed, host: h.host }, name);
        }
      }
      if (snap.hashes.size > 0) {
        for (const a of obs.attachments) {
          const h = a.hashes.find((x) => snap.hashes.has(x.hex));
          if (!h) continue;
          hit(
            `attachment\u0000${a.filename}\u0000${h.hex}`,
            {
              kind: 'attachment',
              value: h.hex,
              attachment: a.filename,
              hash_type: hashType(h.hex),
            },
            name,
          );
        }
      }
    }
    return [...found.values()];
  }

  private stop(st: FeedState): void {
    st.abort.abort();
    if (st.timer) clearTimeout(st.timer);
    st.timer = undefined;
  }

  private schedule(st: FeedState, ms: number): void {
    if (st.timer) clearTimeout(st.timer);
    if (st.abort.signal.aborted) return;
    st.timer = setTimeout(() => {
      st.timer = undefined;
      if (!st.loading) void this.load(st);
    }, ms);
    st.timer.unref(); // a schedule never keeps the process alive
  }

  private load(st: FeedState): Promise<void> {
    const signal = st.abort.signal;
    const src = st.source;
    const run = async () => {
      let ok = false;
      try {
        const snap = await src.load(signal);
        if (signal.aborted) return;
        const reloaded = st.snapshot !== undefined;
        st.snapshot = snap; // the swap: lookups see the old copy or the new one, never a mix
        st.error = undefined;
        ok = true;
        this.log.info(
          {
            feed: src.name,
            format: src.format,
            entries: snap.entries,
            skipped: snap.skipped,
            ...(snap.note ? { note: snap.note } : {}),
          },
          reloaded ? 'threat-intel feed reloaded' : 'threat-intel feed loaded',
        );
      } catch (e) {
        if (signal.aborted) return;
        const err =
          e instanceof FeedError
            ? e
            : new FeedError(CODES.invalid, src.name, `cannot be loaded: ${(e as Error).message}`);
        st.error = { code: err.code, message: err.message, at: new Date().toISOString() };
        this.log.warn(
          {
            feed: src.name,
            code: err.code,
            err: err.message,
            last_good: st.snapshot !== undefined,
          },
          st.snapshot
            ? 'threat-intel feed failed to load; keeping its last good copy'
            : 'threat-intel feed failed to load; it is not used until a load succeeds',
        );
      } finally {
        st.loading = undefined;
        if (!signal.aborted) this.schedule(st, ok ? src.refreshMs : src.retryMs);
      }
    };
    const p = run();
    st.loading = p;
    return p;
  }
}

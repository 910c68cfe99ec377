import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { type HashSet, HashSetBuilder } from './hash-set.ts';
import { normalizeHash, normalizeHost, normalizeUrl } from './normalize.ts';

/** One loaded version of a feed: immutable, swapped whole when a reload succeeds. */
export interface FeedSnapshot {
  /** Normalised URLs (normalize.ts). */
  readonly urls: HashSet;
  /** Host names, registrable domains and IP literals. */
  readonly hosts: HashSet;
  /** Lower-case hex md5, sha1 and sha256. */
  readonly hashes: HashSet;
  readonly entries: number;
  /** Entries that were not a URL / host / hash of the declared kind. */
  readonly skipped: number;
  /** Entries dropped past `max_entries_per_feed`. */
  readonly dropped: number;
  readonly loadedAt: Date;
  /** Something short to say about a load that succeeded with losses (MISP events that failed). */
  readonly note?: string;
}

/** Every this many entries, a load yields to the event loop: analysis goes on while feeds load. */
const YIELD_EVERY = 4096;

/** Collects one load of a feed into hash sets, yielding to the event loop as it goes. */
export class FeedBuilder {
  private readonly urls = new HashSetBuilder();
  private readonly hosts = new HashSetBuilder();
  private readonly hashes = new HashSetBuilder();
  private ops = 0;
  skipped = 0;
  dropped = 0;
  note: string | undefined;

  constructor(private readonly maxEntries: number) {}

  get entries(): number {
    return this.urls.length + this.hosts.length + this.hashes.length;
  }

  private room(): boolean {
    if (this.entries < this.maxEntries) return true;
    this.dropped++;
    return false;
  }

  addUrl(raw: string): void {
    const k = normalizeUrl(raw);
    if (k === undefined) this.skipped++;
    else if (this.room()) this.urls.add(k);
  }

  /** A domain, host name or IP address. */
  addHost(raw: string): void {
    const h = normalizeHost(raw);
    // a bare label ("com", "localhost") would list every name under it
    if (h === undefined || (!h.includes('.') && !h.startsWith('['))) this.skipped++;
    else if (this.room()) this.hosts.add(h);
  }

  addHash(raw: string): void {
    const h = normalizeHash(raw);
    if (h === undefined) this.skipped++;
    else if (this.room()) this.hashes.add(h);
  }

  /** Call once per entry read: every few thousand, lets the event loop run. */
  async tick(): Promise<void> {
    if (++this.ops % YIELD_EVERY === 0) await yieldToLoop();
  }

  build(): FeedSnapshot {
    const entries = this.entries;
    return {
      urls: this.urls.build(),
      hosts: this.hosts.build(),
      hashes: this.hashes.build(),
      entries,
      skipped: this.skipped,
      dropped: this.dropped,
      loadedAt: new Date(),
      ...(this.note ? { note: this.note } : {}),
    };
  }
}

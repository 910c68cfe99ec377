import type { Logger } from 'pino';
import { CursorExpiredError, type MailboxSource } from './source.ts';
import type { SyncStateStore } from './state-store.ts';

interface Page {
  /** The cursor that requested it (undefined: the first page of a full sync). */
  from: string | undefined;
  /** Its ids not yet acked (or found gone). */
  pending: Set<string>;
  next: string;
  done: boolean;
}

export interface LedgerHooks {
  onResync?: () => void;
}

/** Pages followed within one fetch (a backlog is drained over several fetches). */
const MAX_PAGES_PER_FILL = 20;

/**
 * The sync state of one mailbox: the pages pulled since the stored sync token and which of their
 * messages are not acked yet. The stored token moves past a page only once every message of it
 * was acked (the gateway accepted it) or found gone; so after a crash or a restart the pages are
 * pulled again from the oldest one not fully acked, and nothing is skipped. Messages pulled twice
 * are harmless: the acked ones left the watched folder, and the orchestrator drops duplicates.
 */
export class SyncLedger {
  private pages: Page[] = [];
  /** id → its page; insertion order is the hand-out order. */
  private readonly queue = new Map<string, Page>();
  private cursor: string | undefined;
  private loaded = false;
  private filling: Promise<void> | undefined;

  constructor(
    readonly source: MailboxSource,
    private readonly store: SyncStateStore,
    private readonly key: string,
    private readonly logger: Logger,
    private readonly hooks: LedgerHooks = {},
  ) {}

  /** Messages known and not acked yet. */
  get waiting(): number {
    return this.queue.size;
  }

  /** The stored sync token ('none' before the first full sync ends). */
  get state(): 'none' | 'syncing' | 'incremental' {
    if (this.pages.length > 0) return 'syncing';
    return this.cursor === undefined ? 'none' : 'incremental';
  }

  private async load(): Promise<void> {
    if (this.loaded) return;
    this.cursor = (await this.store.get(this.key)) ?? undefined;
    this.loaded = true;
  }

  /** Pulls pages until `want` messages wait or the source has no more (one new round at most). */
  fill(want: number): Promise<void> {
    this.filling ??= this.doFill(want).finally(() => {
      this.filling = undefined;
    });
    return this.filling;
  }

  private async doFill(want: number): Promise<void> {
    await this.load();
    let rounds = 0;
    let resynced = false;
    // The last page pulled in this fill (its page may be settled and gone from `pages` already).
    let prev: { next: string; done: boolean } | undefined;
    for (let n = 0; n < MAX_PAGES_PER_FILL && this.queue.size < want; n++) {
      const last = prev ?? this.pages.at(-1);
      // A finished round's token asks for new changes: once per fill (that is the poll).
      if (!last || last.done) {
        if (rounds > 0) return;
        rounds += 1;
      }
      const from = last ? last.next : this.cursor;
      let page: Awaited<ReturnType<MailboxSource['changes']>>;
      try {
        page = await this.source.changes(from);
      } catch (err) {
        if (!(err instanceof CursorExpiredError) || resynced) throw err;
        resynced = true;
        this.logger.warn({ mailbox: this.source.mailbox }, err.message);
        this.hooks.onResync?.();
        this.pages = [];
        this.queue.clear();
        this.cursor = undefined;
        await this.store.set(this.key, null);
        rounds = 0;
        prev = undefined;
        continue;
      }
      const p: Page = { from, pending: new Set(), next: page.next, done: page.done };
      for (const id of page.ids) {
        if (this.queue.has(id)) continue; // changed again before its ack: one hand-out
        p.pending.add(id);
        this.queue.set(id, p);
      }
      this.pages.push(p);
      prev = p;
      await this.advance();
    }
  }

  /** The first `max` messages waiting, oldest first. */
  peek(max: number): string[] {
    return [...this.queue.keys()].slice(0, max);
  }

  /** The message was acked or is gone: forget it, and move the stored token past full pages. */
  async settle(id: string): Promise<void> {
    const page = this.queue.get(id);
    if (!page) return;
    this.queue.delete(id);
    page.pending.delete(id);
    await this.advance();
  }

  private async advance(): Promise<void> {
    let moved = false;
    while (this.pages[0] && this.pages[0].pending.size === 0) {
      const done = this.pages.shift() as Page;
      this.cursor = done.next;
      moved = true;
    }
    if (this.pages[0]) {
      // Restart from the oldest page with a message not acked yet.
      if (this.cursor !== this.pages[0].from) {
        this.cursor = this.pages[0].from;
        moved = true;
      }
    }
    if (moved) await this.store.set(this.key, this.cursor ?? null);
  }
}

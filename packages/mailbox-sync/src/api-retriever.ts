import type { RetrievedMessage, VerdictRequest } from '@trawl/contracts';
import type { Logger } from 'pino';
import type { ApiRetrieverMetrics } from './metrics.ts';
import { type MailboxSource, UnknownIdError } from './source.ts';
import type { SyncStateStore } from './state-store.ts';
import { SyncLedger } from './sync-ledger.ts';
import { ruleFor, type VerdictRules } from './verdict-rules.ts';

/** What an API retriever (Graph, Gmail) is made of: its mailboxes, sync state and verdict rules. */
export interface ApiRetrieverOptions {
  sources: MailboxSource[];
  store: SyncStateStore;
  /** Prefix of the sync token keys, e.g. `graph:reports:` (retriever kind and name). */
  keyPrefix: string;
  rules: VerdictRules;
  defaults: Parameters<typeof ruleFor>[2];
  /** The retriever's code for an id that is not its own. */
  unknownIdCode: string;
  metrics: ApiRetrieverMetrics;
  logger: Logger;
}

/** The state a /health answer shows per mailbox. */
export interface MailboxHealth {
  mailbox: string;
  sync: 'none' | 'syncing' | 'incremental';
  waiting: number;
  /** The code of the last failure, until the next success. */
  error?: string;
}

/**
 * The retriever protocol over mailboxes of an API (Graph, Gmail):
 *  fetch   → messages waiting in the watched folders, pulled with the sync token (delta, history);
 *  ack     → each message leaves the watched folder, and the sync token moves past the pages
 *            whose messages are all acked (never before the gateway accepted them);
 *  verdict → the rule of its threat level or action (move, tags, flag).
 * Ids are `<mailbox>:<source id>`: a verdict needs no state of this process.
 */
export class ApiRetriever {
  private readonly ledgers = new Map<string, SyncLedger>();
  private readonly lastError = new Map<string, string>();
  private readonly preparing = new Map<string, Promise<void>>();
  private start = 0;
  /** Messages waiting after the last fetch (undefined before the first). */
  backlog: number | undefined;

  constructor(private readonly o: ApiRetrieverOptions) {
    for (const s of o.sources) {
      this.ledgers.set(
        s.mailbox,
        new SyncLedger(s, o.store, `${o.keyPrefix}${s.mailbox}`, o.logger, {
          onResync: () => o.metrics.resyncs.inc(),
        }),
      );
    }
  }

  private async guard<T>(mailbox: string, fn: () => Promise<T>): Promise<T> {
    try {
      const r = await fn();
      this.lastError.delete(mailbox);
      return r;
    } catch (err) {
      const code = (err as { code?: string }).code ?? 'error';
      if (this.lastError.get(mailbox) !== code)
        this.o.logger.warn(
          { mailbox, code, err: (err as Error).message },
          'mailbox request failed',
        );
      this.lastError.set(mailbox, code);
      throw err;
    }
  }

  /** Creates the folders/labels of every mailbox (retried on the next fetch when it failed). */
  async prepare(): Promise<void> {
    for (const s of this.o.sources) await this.prepareOne(s);
  }

  /** Once per mailbox (concurrent callers share it); after a failure, tried again. */
  private prepareOne(s: MailboxSource): Promise<void> {
    let p = this.preparing.get(s.mailbox);
    if (!p) {
      p = this.guard(s.mailbox, () => s.prepare());
      this.preparing.set(s.mailbox, p);
      p.catch(() => this.preparing.delete(s.mailbox));
    }
    return p;
  }

  health(): MailboxHealth[] {
    return this.o.sources.map((s) => {
      const l = this.ledgers.get(s.mailbox) as SyncLedger;
      const error = this.lastError.get(s.mailbox);
      return { mailbox: s.mailbox, sync: l.state, waiting: l.waiting, ...(error ? { error } : {}) };
    });
  }

  get healthy(): boolean {
    return this.lastError.size === 0;
  }

  async fetch(max: number): Promise<RetrievedMessage[]> {
    const out: RetrievedMessage[] = [];
    const n = this.o.sources.length;
    // Each fetch starts at the next mailbox: a big backlog in one does not starve the others.
    const order = this.o.sources.map(
      (_, i) => this.o.sources[(this.start + i) % n] as MailboxSource,
    );
    this.start = (this.start + 1) % Math.max(1, n);
    let failure: unknown;
    for (const s of order) {
      const room = max - out.length;
      if (room <= 0) break;
      const ledger = this.ledgers.get(s.mailbox) as SyncLedger;
      try {
        await this.prepareOne(s);
        await this.guard(s.mailbox, () => ledger.fill(room));
        const ids = ledger.peek(room);
        const raws = await this.guard(s.mailbox, () =>
          Promise.all(ids.map((id) => s.fetchRaw(id))),
        );
        for (let i = 0; i < ids.length; i++) {
          const id = ids[i] as string;
          const raw = raws[i];
          if (!raw) {
            await ledger.settle(id); // gone or already processed: not handed out again
            continue;
          }
          out.push({
            id: `${s.mailbox}:${id}`,
            raw: raw.toString('base64'),
            ...(s.mailbox.includes('@') ? { envelope: { to: [s.mailbox] } } : {}),
          });
        }
      } catch (err) {
        failure ??= err;
      }
    }
    // One mailbox failing does not hold back the others' mail; with nothing to hand out, its error.
    if (out.length === 0 && failure) throw failure;
    let waiting = 0;
    for (const l of this.ledgers.values()) waiting += l.waiting;
    this.backlog = Math.max(0, waiting - out.length);
    this.o.metrics.backlog.set(this.backlog);
    return out;
  }

  private split(id: string): { source: MailboxSource; ledger: SyncLedger; sid: string } {
    const at = id.indexOf(':');
    const ledger = at > 0 ? this.ledgers.get(id.slice(0, at)) : undefined;
    const sid = id.slice(at + 1);
    if (!ledger || sid.length === 0) throw new UnknownIdError(this.o.unknownIdCode, id);
    return { source: ledger.source, ledger, sid };
  }

  async ack(ids: string[]): Promise<{ acked: number; missing: string[] }> {
    let acked = 0;
    const missing: string[] = [];
    for (const id of ids) {
      let parts: ReturnType<ApiRetriever['split']>;
      try {
        parts = this.split(id);
      } catch {
        missing.push(id);
        continue;
      }
      const { source, ledger, sid } = parts;
      try {
        await this.guard(source.mailbox, () => source.markProcessed(sid));
        acked += 1;
      } catch (err) {
        if ((err as { status?: number }).status !== 404) throw err;
        missing.push(id);
      }
      await ledger.settle(sid);
    }
    this.o.metrics.acked.inc(acked);
    return { acked, missing };
  }

  async verdict(req: VerdictRequest): Promise<{ rule: string; where: string }> {
    const { source, sid } = this.split(req.id);
    const { key, rule } = ruleFor(req, this.o.rules, this.o.defaults);
    const where = await this.guard(source.mailbox, () => source.applyVerdict(sid, rule));
    this.o.logger.info(
      { mailbox: source.mailbox, job_id: req.job_id, rule: key, where },
      'verdict applied',
    );
    return { rule: key, where };
  }
}

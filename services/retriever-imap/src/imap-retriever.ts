import type { RecommendedAction, RetrievedMessage, VerdictRequest } from '@trawl/contracts';
import type { ImapFlow } from 'imapflow';
import type { Logger } from 'pino';
import { ImapCommandError, ImapDisconnectedError, MessageNotFoundError } from './errors.ts';
import type { ImapSession } from './imap-session.ts';
import { formatRef, type MessageRef, parseRef } from './message-ref.ts';

export const KEYWORDS = {
  phishing: '$Phishing',
  review: '$TrawlReview',
} as const;

export interface AckResult {
  moved: number;
  /** Ids not found in the mailbox (already moved, or from an older UIDVALIDITY). */
  missing: string[];
}

export interface VerdictOutcome {
  action: RecommendedAction;
  folder: string;
  keywords: string[];
}

interface Location {
  folder: string;
  uid: number;
}

/**
 * The retriever protocol over one IMAP mailbox:
 *  fetch   → every message still in the mailbox (acked ones were moved out), oldest first;
 *  ack     → MOVE to the processed folder (COPY + EXPUNGE where MOVE is missing), remembering the
 *            new UID (COPYUID);
 *  verdict → quarantine: keyword $Phishing + MOVE to the quarantine folder; flag: $Phishing;
 *            review: $TrawlReview; allow: the clean keyword (default $TrawlClean).
 * A verdict finds its message by the UID remembered on ack, else where it was fetched (the verdict
 * came before the ack), else by its Message-ID header in the processed and quarantine folders.
 */
export class ImapRetriever {
  /** id → where the message went on ack (bounded). */
  private readonly moved = new Map<string, Location>();
  private static readonly MAX_REMEMBERED = 50_000;

  constructor(
    private readonly session: ImapSession,
    private readonly logger: Logger,
    private readonly cleanKeyword = '$TrawlClean',
  ) {}

  private async inFolder<T>(
    folder: string,
    what: string,
    fn: (c: ImapFlow) => Promise<T>,
  ): Promise<T> {
    const { client } = this.session.client();
    let lock: Awaited<ReturnType<ImapFlow['getMailboxLock']>>;
    try {
      lock = await client.getMailboxLock(folder);
    } catch (err) {
      if (!this.session.isConnected()) throw new ImapDisconnectedError();
      throw new ImapCommandError(`${what}: select ${folder}`, err);
    }
    try {
      // The server reports mail that arrived since the last command with the next one: sync first.
      await client.noop();
      return await fn(client);
    } catch (err) {
      if (err instanceof MessageNotFoundError) throw err;
      if (!this.session.isConnected()) throw new ImapDisconnectedError();
      throw new ImapCommandError(what, err);
    } finally {
      lock.release();
    }
  }

  private uidValidityOf(c: ImapFlow): string {
    return c.mailbox ? String(c.mailbox.uidValidity) : '0';
  }

  async fetch(max: number): Promise<RetrievedMessage[]> {
    const { folders } = this.session.client();
    return this.inFolder(folders.mailbox, 'fetch', async (c) => {
      const uidValidity = this.uidValidityOf(c);
      const found = (await c.search({ deleted: false }, { uid: true })) || [];
      const uids = [...found].sort((a, b) => a - b).slice(0, max);
      if (uids.length === 0) return [];
      const out: RetrievedMessage[] = [];
      for await (const m of c.fetch(
        uids.join(','),
        { uid: true, source: true, envelope: true },
        { uid: true },
      )) {
        if (!m.source) continue;
        const messageId = m.envelope?.messageId;
        const ref: MessageRef = { uidValidity, uid: m.uid, ...(messageId ? { messageId } : {}) };
        out.push({ id: formatRef(ref), raw: m.source.toString('base64') });
      }
      out.sort((a, b) => (parseRef(a.id)?.uid ?? 0) - (parseRef(b.id)?.uid ?? 0));
      return out;
    });
  }

  async ack(ids: string[]): Promise<AckResult> {
    const { folders } = this.session.client();
    return this.inFolder(folders.mailbox, 'ack', async (c) => {
      const uidValidity = this.uidValidityOf(c);
      const byUid = new Map<number, string>();
      const missing: string[] = [];
      for (const id of ids) {
        const ref = parseRef(id);
        if (!ref || ref.uidValidity !== uidValidity) missing.push(id);
        else byUid.set(ref.uid, id);
      }
      if (byUid.size === 0) return { moved: 0, missing };
      const present = new Set(
        (await c.search({ uid: [...byUid.keys()].join(',') }, { uid: true })) || [],
      );
      for (const [uid, id] of byUid) if (!present.has(uid)) missing.push(id);
      const uids = [...present];
      if (uids.length === 0) return { moved: 0, missing };
      const res = await c.messageMove(uids.join(','), folders.processed, { uid: true });
      if (res && res.uidMap !== undefined) {
        for (const [src, dst] of res.uidMap) {
          const id = byUid.get(src);
          if (id) this.remember(id, { folder: folders.processed, uid: dst });
        }
      }
      return { moved: uids.length, missing };
    });
  }

  private remember(id: string, loc: Location): void {
    if (this.moved.size >= ImapRetriever.MAX_REMEMBERED) {
      const first = this.moved.keys().next();
      if (!first.done) this.moved.delete(first.value);
    }
    this.moved.set(id, loc);
  }

  /** Where the message of `id` is now, checking each candidate exists (and is the same message). */
  private async locate(id: string): Promise<Location | null> {
    const { folders } = this.session.client();
    const ref = parseRef(id);
    const matches = async (loc: Location): Promise<boolean> =>
      this.inFolder(loc.folder, 'locate', async (c) => {
        const query = ref?.messageId
          ? { uid: String(loc.uid), header: { 'message-id': ref.messageId } }
          : { uid: String(loc.uid) };
        const r = (await c.search(query, { uid: true })) || [];
        return r.includes(loc.uid);
      });
    const remembered = this.moved.get(id);
    if (remembered && (await matches(remembered))) return remembered;
    if (ref) {
      const inMailbox = await this.inFolder(folders.mailbox, 'locate', async (c) => {
        if (this.uidValidityOf(c) !== ref.uidValidity) return false;
        const q = ref.messageId
          ? { uid: String(ref.uid), header: { 'message-id': ref.messageId } }
          : { uid: String(ref.uid) };
        return ((await c.search(q, { uid: true })) || []).includes(ref.uid);
      });
      if (inMailbox) return { folder: folders.mailbox, uid: ref.uid };
    }
    if (ref?.messageId) {
      const mid = ref.messageId;
      for (const folder of [folders.processed, folders.quarantine]) {
        const uids = await this.inFolder(folder, 'locate', async (c) => {
          return (await c.search({ header: { 'message-id': mid } }, { uid: true })) || [];
        });
        const newest = uids.length ? Math.max(...uids) : undefined;
        if (newest !== undefined) return { folder, uid: newest };
      }
    }
    return null;
  }

  async verdict(req: VerdictRequest): Promise<VerdictOutcome> {
    const { folders } = this.session.client();
    const loc = await this.locate(req.id);
    if (!loc) throw new MessageNotFoundError(req.id);
    const action = req.result.recommended_action;
    const keywords =
      action === 'quarantine' || action === 'flag'
        ? [KEYWORDS.phishing]
        : action === 'review'
          ? [KEYWORDS.review]
          : this.cleanKeyword
            ? [this.cleanKeyword]
            : [];
    let folder = loc.folder;
    await this.inFolder(loc.folder, 'verdict', async (c) => {
      if (keywords.length) await c.messageFlagsAdd(String(loc.uid), keywords, { uid: true });
      if (action === 'quarantine' && loc.folder !== folders.quarantine) {
        const res = await c.messageMove(String(loc.uid), folders.quarantine, { uid: true });
        const dst = res ? res.uidMap?.get(loc.uid) : undefined;
        if (dst !== undefined) this.remember(req.id, { folder: folders.quarantine, uid: dst });
        folder = folders.quarantine;
      }
    });
    this.logger.info({ id: req.id, job_id: req.job_id, action, folder }, 'verdict applied');
    return { action, folder, keywords };
  }
}

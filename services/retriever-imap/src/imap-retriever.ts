import type {
  RecommendedAction,
  RetrievedMessage,
  VerdictKind,
  VerdictRequest,
} from '@trawl/contracts';
import type { ImapFlow } from 'imapflow';
import type { Logger } from 'pino';
import { ImapCommandError, ImapDisconnectedError, MessageNotFoundError } from './errors.ts';
import type { ImapSession } from './imap-session.ts';
import { formatRef, type MessageRef, parseRef } from './message-ref.ts';

/** The IMAP keywords the retriever sets on analysed messages. */
export const KEYWORDS = {
  phishing: '$Phishing',
  review: '$TrawlReview',
  /** With $TrawlReview on a message Trawl could not analyse (moved to the hold folder). */
  unanalyzed: '$TrawlUnanalyzed',
} as const;

/** What an ack did: messages moved, ids not found. */
export interface AckResult {
  moved: number;
  /** Ids not found in the mailbox (already moved, or from an older UIDVALIDITY). */
  missing: string[];
}

/** What a verdict did to a message: folder and keywords. */
export interface VerdictOutcome {
  action: RecommendedAction;
  /** `unanalyzed`: the message was held (hold folder) whatever the action says. */
  verdict: VerdictKind;
  folder: string;
  keywords: string[];
}

/** The IMAP retriever's folders, keywords and bounds. */
export interface ImapRetrieverOptions {
  /** Keyword for `allow` verdicts (empty: none). Default $TrawlClean. */
  cleanKeyword?: string;
  /** The mailbox's address, handed out as each message's envelope recipient. */
  address?: string | undefined;
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
 *  verdict → unanalyzed (whatever the action): $TrawlUnanalyzed + $TrawlReview + MOVE to the hold
 *            folder; quarantine: keyword $Phishing + MOVE to the quarantine folder; flag:
 *            $Phishing; review: $TrawlReview; allow: the clean keyword (default $TrawlClean).
 * A verdict finds its message by the UID remembered on ack, else where it was fetched (the verdict
 * came before the ack), else by its Message-ID header in the processed, quarantine and hold folders.
 */
export class ImapRetriever {
  /** id → where the message went on ack (bounded). */
  private readonly moved = new Map<string, Location>();
  private static readonly MAX_REMEMBERED = 50_000;

  private readonly cleanKeyword: string;
  private readonly envelope: RetrievedMessage['envelope'];

  constructor(
    private readonly session: ImapSession,
    private readonly logger: Logger,
    options: ImapRetrieverOptions = {},
  ) {
    this.cleanKeyword = options.cleanKeyword ?? '$TrawlClean';
    this.envelope = options.address ? { to: [options.address] } : undefined;
  }

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

  /** Messages left in the mailbox after the last fetch (undefined before the first). */
  backlog: number | undefined;

  async fetch(max: number): Promise<RetrievedMessage[]> {
    const { folders } = this.session.client();
    return this.inFolder(folders.mailbox, 'fetch', async (c) => {
      const uidValidity = this.uidValidityOf(c);
      const found = (await c.search({ deleted: false }, { uid: true })) || [];
      const uids = [...found].sort((a, b) => a - b).slice(0, max);
      this.backlog = found.length - uids.length;
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
        out.push({
          id: formatRef(ref),
          raw: m.source.toString('base64'),
          ...(this.envelope ? { envelope: this.envelope } : {}),
        });
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

  /**
   * Applies a verdict where the message is now. Each place is checked and acted on under one lock
   * of its folder, so an ack moving the message meanwhile cannot make the verdict miss it: the
   * places are tried in the order the message travels (mailbox → processed → quarantine).
   */
  async verdict(req: VerdictRequest): Promise<VerdictOutcome> {
    const { folders } = this.session.client();
    const ref = parseRef(req.id);
    const action = req.result.recommended_action;
    const verdict: VerdictKind = req.verdict ?? 'analyzed';
    // A message Trawl could not analyse is held apart, whatever its result says: never filed
    // where clean mail goes.
    const holdIn = verdict === 'unanalyzed' ? folders.hold : undefined;
    const moveTo = holdIn ?? (action === 'quarantine' ? folders.quarantine : undefined);
    const keywords = holdIn
      ? [KEYWORDS.unanalyzed, KEYWORDS.review]
      : action === 'quarantine' || action === 'flag'
        ? [KEYWORDS.phishing]
        : action === 'review'
          ? [KEYWORDS.review]
          : this.cleanKeyword
            ? [this.cleanKeyword]
            : [];

    /** Acts on `uid` in `folder` if it is there (and is the same message); answers the folder. */
    const actAt = (folder: string, find: (c: ImapFlow) => Promise<number | undefined>) =>
      this.inFolder(folder, 'verdict', async (c): Promise<string | null> => {
        const uid = await find(c);
        if (uid === undefined) return null;
        if (keywords.length) await c.messageFlagsAdd(String(uid), keywords, { uid: true });
        if (moveTo !== undefined && folder !== moveTo) {
          const res = await c.messageMove(String(uid), moveTo, { uid: true });
          if (!res) return null; // gone in between
          const dst = res.uidMap?.get(uid);
          if (dst !== undefined) this.remember(req.id, { folder: moveTo, uid: dst });
          return moveTo;
        }
        return folder;
      });
    // A UID is never reused within one UIDVALIDITY: it is enough to tell the message.
    const byUid = (uid: number) => async (c: ImapFlow) =>
      ((await c.search({ uid: String(uid) }, { uid: true })) || []).includes(uid) ? uid : undefined;
    const byMessageId = (mid: string) => async (c: ImapFlow) => {
      const uids = (await c.search({ header: { 'message-id': mid } }, { uid: true })) || [];
      return uids.length ? Math.max(...uids) : undefined;
    };

    let folder: string | null = null;
    if (ref) {
      folder = await this.inFolder(folders.mailbox, 'verdict', async (c) =>
        this.uidValidityOf(c) === ref.uidValidity ? folders.mailbox : null,
      );
      if (folder) folder = await actAt(folders.mailbox, byUid(ref.uid));
    }
    if (!folder) {
      const remembered = this.moved.get(req.id);
      if (remembered) folder = await actAt(remembered.folder, byUid(remembered.uid));
    }
    if (!folder && ref?.messageId) {
      for (const f of [folders.processed, folders.quarantine, folders.hold]) {
        folder = await actAt(f, byMessageId(ref.messageId));
        if (folder) break;
      }
    }
    if (!folder) throw new MessageNotFoundError(req.id);
    this.logger.info(
      { id: req.id, job_id: req.job_id, action, verdict, folder },
      'verdict applied',
    );
    return { action, verdict, folder, keywords };
  }
}

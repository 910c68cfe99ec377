import { TransientError } from '@trawl/contracts';
import {
  type ChangePage,
  CursorExpiredError,
  MailboxAccessError,
  type MailboxSource,
  MessageGoneError,
  type VerdictRule,
} from '@trawl/mailbox-sync';
import type { ApiAnswer, ApiClient } from '@trawl/oauth';
import { z } from 'zod';
import { GMAIL_ERRORS } from './errors.ts';

const GmailError = z.object({
  error: z.object({
    code: z.number().optional(),
    message: z.string().optional(),
    errors: z.array(z.object({ reason: z.string().optional() })).optional(),
  }),
});
const Profile = z.object({ historyId: z.coerce.string().regex(/^\d{1,20}$/) });
const MessageList = z.object({
  messages: z.array(z.object({ id: z.string().min(1) })).optional(),
  nextPageToken: z.string().optional(),
});
const HistoryList = z.object({
  history: z
    .array(
      z.object({
        messagesAdded: z
          .array(
            z.object({
              message: z.object({ id: z.string(), labelIds: z.array(z.string()).optional() }),
            }),
          )
          .optional(),
      }),
    )
    .optional(),
  nextPageToken: z.string().optional(),
  historyId: z.coerce.string().regex(/^\d{1,20}$/),
});
const RawMessage = z.object({
  raw: z.string().optional(),
  labelIds: z.array(z.string()).optional(),
});
const Labels = z.object({
  labels: z.array(z.object({ id: z.string(), name: z.string() })).optional(),
});
const Label = z.object({ id: z.string() });

/** Reasons of the Gmail API's quota errors (403 or 429), backed off and retried. */
const QUOTA_REASONS = new Set(['rateLimitExceeded', 'userRateLimitExceeded']);

/** True for a quota answer of the Gmail API (for the API client's retries). */
export function gmailThrottled(status: number, body: unknown): boolean {
  if (status !== 403 && status !== 429) return false;
  const p = GmailError.safeParse(body);
  return p.success && (p.data.error.errors ?? []).some((e) => QUOTA_REASONS.has(e.reason ?? ''));
}

function reasonOf(a: ApiAnswer): string {
  const p = GmailError.safeParse(a.json());
  return p.success ? (p.data.error.errors?.[0]?.reason ?? '') : '';
}

function parse<T>(schema: z.ZodType<T>, a: ApiAnswer, what: string): T {
  const p = schema.safeParse(a.json());
  if (!p.success)
    throw new TransientError(
      GMAIL_ERRORS.api,
      `${what}: the Gmail API's answer is not as documented`,
    );
  return p.data;
}

/** One Gmail mailbox's labels, page size and message bound. */
export interface GmailMailboxOptions {
  /** The watched label (INBOX). */
  label: string;
  processedLabel: string;
  pageSize: number;
  maxMessageBytes: number;
  /** Label names the verdict rules use (created by prepare). */
  ruleLabels: string[];
}

/**
 * One Gmail mailbox: users.history.list from the last history id (a full sync by messages.list
 * when it expired), messages.get format=raw, and labels for the ack (the processed label replaces
 * the watched one) and the verdicts ("moves" are label swaps; a flag is a star).
 */
export class GmailMailbox implements MailboxSource {
  private readonly user: string;
  private labelIds: Map<string, string> | undefined;

  constructor(
    private readonly api: ApiClient,
    readonly mailbox: string,
    private readonly o: GmailMailboxOptions,
  ) {
    this.user = `users/${encodeURIComponent(mailbox)}`;
  }

  private fail(a: ApiAnswer, what: string): never {
    const reason = reasonOf(a);
    if (a.status === 401 || a.status === 403)
      throw new MailboxAccessError(
        GMAIL_ERRORS.accessDenied,
        `${what}: the Gmail API denied access to ${this.mailbox} (${a.status} ${reason}). The service account needs domain-wide delegation of https://www.googleapis.com/auth/gmail.modify for this user, or the user's token that scope (docs/mail-ingestion.md)`,
      );
    if (a.status === 400 && reason === 'failedPrecondition')
      throw new MailboxAccessError(
        GMAIL_ERRORS.mailboxNotFound,
        `${what}: ${this.mailbox} has no Gmail mailbox`,
      );
    throw new TransientError(
      GMAIL_ERRORS.api,
      `${what}: the Gmail API answered ${a.status} ${reason}`,
    );
  }

  private async request(
    method: 'GET' | 'POST',
    url: string,
    what: string,
    json?: unknown,
    maxBytes?: number,
  ) {
    return this.api.request({
      method,
      url: `${this.user}/${url}`,
      what,
      ...(json !== undefined ? { json } : {}),
      ...(maxBytes ? { maxBytes } : {}),
    });
  }

  async prepare(): Promise<void> {
    const a = await this.request('GET', 'labels', 'list labels');
    if (a.status !== 200) this.fail(a, 'list labels');
    const ids = new Map((parse(Labels, a, 'list labels').labels ?? []).map((l) => [l.name, l.id]));
    for (const name of [this.o.processedLabel, ...this.o.ruleLabels]) {
      if (ids.has(name)) continue;
      const made = await this.request('POST', 'labels', `create label ${name}`, {
        name,
        labelListVisibility: 'labelShow',
        messageListVisibility: 'show',
      });
      if (made.status === 409) {
        this.labelIds = undefined; // made meanwhile: read the list again next time
        return this.prepare();
      }
      if (made.status !== 200) this.fail(made, `create label ${name}`);
      ids.set(name, parse(Label, made, 'create label').id);
    }
    this.labelIds = ids;
  }

  private async idOf(name: string): Promise<string> {
    if (!this.labelIds) await this.prepare();
    const id = this.labelIds?.get(name) ?? (/^[A-Z_]+$/.test(name) ? name : undefined);
    if (!id) throw new TransientError(GMAIL_ERRORS.api, `label ${name} is missing`);
    return id;
  }

  async changes(cursor: string | undefined): Promise<ChangePage> {
    const max = this.o.pageSize;
    const label = encodeURIComponent(this.o.label);
    // A full sync: the history id first, so that nothing that arrives while listing is missed.
    if (cursor === undefined || cursor.startsWith('full:')) {
      let since: string;
      let token: string | undefined;
      if (cursor) {
        const [, h, t] = cursor.split(':');
        since = h ?? '';
        token = t || undefined;
      } else {
        const p = await this.request('GET', 'profile', 'profile');
        if (p.status !== 200) this.fail(p, 'profile');
        since = parse(Profile, p, 'profile').historyId;
      }
      const a = await this.request(
        'GET',
        `messages?labelIds=${label}&maxResults=${max}${token ? `&pageToken=${encodeURIComponent(token)}` : ''}`,
        'list messages',
      );
      if (a.status !== 200) this.fail(a, 'list messages');
      const l = parse(MessageList, a, 'list messages');
      return {
        ids: (l.messages ?? []).map((m) => m.id),
        next: l.nextPageToken ? `full:${since}:${l.nextPageToken}` : `h:${since}`,
        done: !l.nextPageToken,
      };
    }
    const [, since, token] = cursor.split(':');
    const a = await this.request(
      'GET',
      `history?startHistoryId=${since}&historyTypes=messageAdded&labelId=${label}&maxResults=${max}${token ? `&pageToken=${encodeURIComponent(token)}` : ''}`,
      'history',
    );
    if (a.status === 404) throw new CursorExpiredError(`history of ${this.mailbox}`);
    if (a.status !== 200) this.fail(a, 'history');
    const h = parse(HistoryList, a, 'history');
    const ids = (h.history ?? []).flatMap((r) => (r.messagesAdded ?? []).map((m) => m.message.id));
    return {
      ids,
      next: h.nextPageToken ? `h:${since}:${h.nextPageToken}` : `h:${h.historyId}`,
      done: !h.nextPageToken,
    };
  }

  async fetchRaw(id: string): Promise<Buffer | null> {
    const processed = await this.idOf(this.o.processedLabel);
    // base64url inflates by 4/3; the JSON around it is small
    const a = await this.request(
      'GET',
      `messages/${encodeURIComponent(id)}?format=raw`,
      'read message',
      undefined,
      Math.ceil((this.o.maxMessageBytes * 4) / 3) + 64 * 1024,
    );
    if (a.status === 404) return null;
    if (a.status !== 200) this.fail(a, 'read message');
    const m = parse(RawMessage, a, 'read message');
    const labels = new Set(m.labelIds ?? []);
    // Acked before (the processed label replaced the watched one), or moved by a person.
    if (!labels.has(this.o.label) || labels.has(processed) || !m.raw) return null;
    return Buffer.from(m.raw, 'base64url');
  }

  private async modify(id: string, add: string[], remove: string[], what: string): Promise<void> {
    const a = await this.request('POST', `messages/${encodeURIComponent(id)}/modify`, what, {
      addLabelIds: add,
      removeLabelIds: remove,
    });
    if (a.status === 404) throw new MessageGoneError(GMAIL_ERRORS.messageNotFound, id);
    if (a.status !== 200) this.fail(a, what);
  }

  async markProcessed(id: string): Promise<void> {
    const a = await this.request('GET', `messages/${encodeURIComponent(id)}?format=minimal`, 'ack');
    if (a.status === 404) throw new MessageGoneError(GMAIL_ERRORS.messageNotFound, id);
    if (a.status !== 200) this.fail(a, 'ack');
    // Only out of the watched label: a verdict that came first may have moved it already.
    if (!(parse(RawMessage, a, 'ack').labelIds ?? []).includes(this.o.label)) return;
    await this.modify(id, [await this.idOf(this.o.processedLabel)], [this.o.label], 'ack');
  }

  async applyVerdict(id: string, rule: VerdictRule): Promise<string> {
    const add = await Promise.all(rule.tags.map((t) => this.idOf(t)));
    if (rule.flag) add.push('STARRED');
    const remove: string[] = [];
    if (rule.move_to) {
      add.push(await this.idOf(rule.move_to));
      remove.push(this.o.label, await this.idOf(this.o.processedLabel));
    }
    await this.modify(id, add, remove, 'verdict');
    return rule.move_to ?? this.o.processedLabel;
  }
}

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
import { GRAPH_ERRORS } from './errors.ts';

const GraphError = z.object({
  error: z.object({ code: z.string().max(200), message: z.string().optional() }),
});
const Folder = z.object({ id: z.string().min(1) });
const FolderList = z.object({ value: z.array(Folder) });
const DeltaPage = z.object({
  value: z.array(z.object({ id: z.string().min(1), '@removed': z.unknown().optional() })),
  '@odata.nextLink': z.url().optional(),
  '@odata.deltaLink': z.url().optional(),
});
const MessageMeta = z.object({
  id: z.string(),
  parentFolderId: z.string().optional(),
  categories: z.array(z.string()).optional(),
});

/** One Graph mailbox's folders, page size and message bound. */
export interface GraphMailboxOptions {
  folder: string;
  processedFolder: string;
  pageSize: number;
  maxMessageBytes: number;
  /** Folders the verdict rules move to (created by prepare). */
  ruleFolders: string[];
}

/** Graph's error code of an answer ('' when it has none). */
function codeOf(a: ApiAnswer): string {
  const p = GraphError.safeParse(a.json());
  return p.success ? p.data.error.code : '';
}

function parse<T>(schema: z.ZodType<T>, a: ApiAnswer, what: string): T {
  const p = schema.safeParse(a.json());
  if (!p.success)
    throw new TransientError(GRAPH_ERRORS.api, `${what}: Graph's answer is not as documented`);
  return p.data;
}

/** An OData string literal ('' for each '). */
const odataString = (s: string) => `'${s.replace(/'/g, "''")}'`;

/**
 * One mailbox through Microsoft Graph: delta query of the watched folder (immutable ids, so a
 * message keeps its id when moved), `$value` for the MIME, `move` to the processed folder on ack,
 * categories, flag and move for verdicts.
 */
export class GraphMailbox implements MailboxSource {
  private readonly user: string;
  private watchedId: string | undefined;
  private readonly folderIds = new Map<string, string>();

  constructor(
    private readonly api: ApiClient,
    readonly mailbox: string,
    private readonly o: GraphMailboxOptions,
  ) {
    this.user = `users/${encodeURIComponent(mailbox)}`;
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { prefer: 'IdType="ImmutableId"', ...extra };
  }

  /** Throws the error an unsuccessful answer stands for. */
  private fail(a: ApiAnswer, what: string): never {
    const code = codeOf(a);
    if (a.status === 403 || a.status === 401)
      throw new MailboxAccessError(
        GRAPH_ERRORS.accessDenied,
        `${what}: Graph denied access to ${this.mailbox} (${a.status} ${code}). The app needs the Mail.ReadWrite application permission with admin consent, and the application access policy must include this mailbox (docs/mail-ingestion.md)`,
      );
    if (a.status === 404 && (code === 'ErrorInvalidUser' || code === 'MailboxNotEnabledForRESTAPI'))
      throw new MailboxAccessError(
        GRAPH_ERRORS.mailboxNotFound,
        `${what}: ${this.mailbox} is not an Exchange Online mailbox (${code})`,
      );
    throw new TransientError(GRAPH_ERRORS.api, `${what}: Graph answered ${a.status} ${code}`);
  }

  private async folderId(path: string): Promise<string> {
    const known = this.folderIds.get(path);
    if (known) return known;
    let parent: string | undefined;
    for (const name of path.split('/').filter(Boolean)) {
      const base = parent
        ? `${this.user}/mailFolders/${parent}/childFolders`
        : `${this.user}/mailFolders`;
      const what = `find folder ${name}`;
      const findUrl = `${base}?$filter=${encodeURIComponent(`displayName eq ${odataString(name)}`)}`;
      const found = await this.api.request({
        url: findUrl,
        headers: this.headers(),
        what,
      });
      if (found.status !== 200) this.fail(found, what);
      let id = parse(FolderList, found, what).value[0]?.id;
      for (let tries = 0; !id && tries < 2; tries++) {
        const made = await this.api.request({
          method: 'POST',
          url: base,
          json: { displayName: name },
          headers: this.headers(),
          what: `create folder ${name}`,
        });
        if (made.status === 201 || made.status === 200)
          id = parse(Folder, made, 'create folder').id;
        else if (codeOf(made) === 'ErrorFolderExists') {
          // made meanwhile (another replica): find it again
          const again = await this.api.request({ url: findUrl, headers: this.headers(), what });
          if (again.status !== 200) this.fail(again, what);
          id = parse(FolderList, again, what).value[0]?.id;
        } else this.fail(made, `create folder ${name}`);
      }
      if (!id) throw new TransientError(GRAPH_ERRORS.api, `${what}: not found after it was made`);
      parent = id;
    }
    if (!parent) throw new TransientError(GRAPH_ERRORS.api, `empty folder path ${path}`);
    this.folderIds.set(path, parent);
    return parent;
  }

  async prepare(): Promise<void> {
    const what = `open folder ${this.o.folder}`;
    const a = await this.api.request({
      url: `${this.user}/mailFolders/${encodeURIComponent(this.o.folder)}`,
      headers: this.headers(),
      what,
    });
    if (a.status !== 200) this.fail(a, what);
    this.watchedId = parse(Folder, a, what).id;
    for (const f of [this.o.processedFolder, ...this.o.ruleFolders]) await this.folderId(f);
  }

  async changes(cursor: string | undefined): Promise<ChangePage> {
    const url =
      cursor ??
      `${this.user}/mailFolders/${encodeURIComponent(this.o.folder)}/messages/delta?$select=id,internetMessageId,parentFolderId`;
    const a = await this.api.request({
      url,
      headers: this.headers({
        prefer: `IdType="ImmutableId", odata.maxpagesize=${this.o.pageSize}`,
      }),
      what: 'delta',
    });
    if (a.status === 410 || /^syncstatenotfound$/i.test(codeOf(a)))
      throw new CursorExpiredError(`delta of ${this.mailbox}`);
    if (a.status !== 200) this.fail(a, 'delta');
    const page = parse(DeltaPage, a, 'delta');
    const next = page['@odata.nextLink'] ?? page['@odata.deltaLink'];
    if (!next) throw new TransientError(GRAPH_ERRORS.api, 'delta: a page with neither link');
    if (!next.startsWith(this.api.baseUrl))
      throw new TransientError(GRAPH_ERRORS.api, 'delta: a link outside the Graph endpoint');
    return {
      ids: page.value.filter((v) => v['@removed'] === undefined).map((v) => v.id),
      next,
      done: page['@odata.nextLink'] === undefined,
    };
  }

  private async meta(id: string, what: string) {
    const a = await this.api.request({
      url: `${this.user}/messages/${encodeURIComponent(id)}?$select=parentFolderId,categories`,
      headers: this.headers(),
      what,
    });
    if (a.status === 404 && codeOf(a) === 'ErrorItemNotFound') return null;
    if (a.status !== 200) this.fail(a, what);
    return parse(MessageMeta, a, what);
  }

  async fetchRaw(id: string): Promise<Buffer | null> {
    if (!this.watchedId) await this.prepare();
    const m = await this.meta(id, 'read message');
    // Moved out by an earlier ack (or by a person): not waiting any more.
    if (!m || m.parentFolderId !== this.watchedId) return null;
    const a = await this.api.request({
      url: `${this.user}/messages/${encodeURIComponent(id)}/$value`,
      headers: this.headers({ accept: 'text/plain, message/rfc822, */*' }),
      maxBytes: this.o.maxMessageBytes,
      what: 'read MIME',
    });
    if (a.status === 404) return null;
    if (a.status !== 200) this.fail(a, 'read MIME');
    return a.body;
  }

  private async move(id: string, folderPath: string, what: string): Promise<void> {
    const destinationId = await this.folderId(folderPath);
    const a = await this.api.request({
      method: 'POST',
      url: `${this.user}/messages/${encodeURIComponent(id)}/move`,
      json: { destinationId },
      headers: this.headers(),
      what,
    });
    if (a.status === 404 && codeOf(a) === 'ErrorItemNotFound')
      throw new MessageGoneError(GRAPH_ERRORS.messageNotFound, id);
    if (a.status !== 201 && a.status !== 200) this.fail(a, what);
  }

  async markProcessed(id: string): Promise<void> {
    const m = await this.meta(id, 'ack');
    if (!m) throw new MessageGoneError(GRAPH_ERRORS.messageNotFound, id);
    if (!this.watchedId) await this.prepare();
    // Only out of the watched folder: a verdict that came first may have moved it already.
    if (m.parentFolderId === this.watchedId) await this.move(id, this.o.processedFolder, 'ack');
  }

  async applyVerdict(id: string, rule: VerdictRule): Promise<string> {
    const m = await this.meta(id, 'verdict');
    if (!m) throw new MessageGoneError(GRAPH_ERRORS.messageNotFound, id);
    const categories = [...new Set([...(m.categories ?? []), ...rule.tags])];
    if (categories.length !== (m.categories ?? []).length || rule.flag) {
      const a = await this.api.request({
        method: 'PATCH',
        url: `${this.user}/messages/${encodeURIComponent(id)}`,
        json: { categories, ...(rule.flag ? { flag: { flagStatus: 'flagged' } } : {}) },
        headers: this.headers(),
        what: 'verdict',
      });
      if (a.status === 404) throw new MessageGoneError(GRAPH_ERRORS.messageNotFound, id);
      if (a.status !== 200) this.fail(a, 'verdict');
    }
    if (!rule.move_to)
      return m.parentFolderId === this.watchedId ? this.o.folder : this.o.processedFolder;
    await this.move(id, rule.move_to, 'verdict');
    return rule.move_to;
  }
}

import { z } from 'zod';
import { normaliseDomain } from './job-search.ts';

/**
 * The organisation's allow and block lists (issue 32): entries an admin decides on, stored in the
 * database (`list_entries`), applied by the `lists` analyzer as scored symbols
 * (docs/analyzers.md#allow-and-block-lists).
 */
export const LIST_NAMES = ['allow', 'block'] as const;
/** Which list an entry belongs to (LIST_NAMES). */
export const ListName = z.enum(LIST_NAMES);
export type ListName = z.infer<typeof ListName>;

/**
 * What an entry matches: the From address, the From domain (and its subdomains), a URL's host (and
 * its subdomains), an attachment's SHA-256.
 */
export const LIST_KINDS = ['sender', 'sender_domain', 'url_host', 'sha256'] as const;
/** What a list entry matches (LIST_KINDS). */
export const ListKind = z.enum(LIST_KINDS);
export type ListKind = z.infer<typeof ListKind>;

/** Entries a list holds at most (the analyzers keep them all in memory). */
export const MAX_LIST_ENTRIES = 50_000;

const ADDRESS = /^[^\s@<>()",;]{1,64}@[^\s@<>()",;]{1,255}$/;

/**
 * An entry's value as stored and matched: a lower-case address, a domain (IDN as punycode, no
 * leading `@` or `*.`), or 64 lower-case hex digits; undefined when it is not one.
 */
export function normaliseListValue(kind: ListKind, raw: string): string | undefined {
  const v = raw.trim().toLowerCase();
  switch (kind) {
    case 'sender': {
      if (!ADDRESS.test(v)) return undefined;
      const at = v.lastIndexOf('@');
      const domain = normaliseDomain(v.slice(at + 1));
      return domain ? `${v.slice(0, at)}@${domain}` : undefined;
    }
    case 'sender_domain':
    case 'url_host':
      return normaliseDomain(v.replace(/^\*\./, ''));
    case 'sha256':
      return /^[0-9a-f]{64}$/.test(v) ? v : undefined;
  }
}

const KIND_HINT: Record<ListKind, string> = {
  sender: 'must be an email address such as billing@vendor.example',
  sender_domain: 'must be a domain such as vendor.example',
  url_host: 'must be a host or domain such as files.vendor.example',
  sha256: 'must be 64 hex digits',
};

/** POST /api/v1/lists body. */
export const CreateListEntry = z
  .strictObject({
    list: ListName,
    kind: ListKind,
    value: z.string().min(1).max(320),
    note: z.string().max(500).optional(),
    /** When the entry stops counting (ISO 8601, in the future); absent: never. */
    expires_at: z.iso.datetime({ offset: true }).optional(),
  })
  .transform((e, ctx) => {
    const value = normaliseListValue(e.kind, e.value);
    if (value === undefined) {
      ctx.addIssue({ code: 'custom', path: ['value'], message: KIND_HINT[e.kind] });
      return z.NEVER;
    }
    const out: {
      list: ListName;
      kind: ListKind;
      value: string;
      note?: string;
      expires_at?: string;
    } = { list: e.list, kind: e.kind, value };
    if (e.note) out.note = e.note;
    if (e.expires_at) out.expires_at = new Date(e.expires_at).toISOString();
    return out;
  });
export type CreateListEntry = z.output<typeof CreateListEntry>;

/** An entry as the API shows it. */
export const ListEntry = z.object({
  id: z.uuid(),
  list: ListName,
  kind: ListKind,
  value: z.string(),
  note: z.string().nullable(),
  created_by: z.string().nullable(),
  created_at: z.string(),
  expires_at: z.string().nullable(),
  /** The entry's expiry has passed: it no longer counts. */
  expired: z.boolean(),
});
export type ListEntry = z.infer<typeof ListEntry>;

/** The entries of the allow and block lists. */
export const ListEntries = z.object({ items: z.array(ListEntry) });
export type ListEntries = z.infer<typeof ListEntries>;

/** GET /api/v1/lists query. */
export const ListQuery = z.strictObject({
  list: ListName.optional(),
  kind: ListKind.optional(),
});

/** Event on trawl.control / lists.changed: the analyzers read the lists again. */
export const ListsChangedEvent = z.object({ at: z.string() });
export type ListsChangedEvent = z.infer<typeof ListsChangedEvent>;

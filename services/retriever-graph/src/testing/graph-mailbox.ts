import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { sendJson } from '@trawl/oauth/testing';

// The test Graph server's mailboxes: folders, messages, and what a move leaves behind.

export interface Folder {
  id: string;
  displayName: string;
  parentId: string | null;
}
export interface Message {
  id: string;
  folderId: string;
  mime: Buffer;
  internetMessageId: string;
  categories: string[];
  flagStatus: 'notFlagged' | 'flagged';
  /** Sequence of its last change (created, updated, moved in). */
  seq: number;
}
export interface Mailbox {
  folders: Map<string, Folder>;
  messages: Map<string, Message>;
  /** folder id → (message id → sequence it left the folder). */
  left: Map<string, Map<string, number>>;
  inFlight: number;
}

/** The server's counters: the sequence of the last change, the delta token generation, its URL. */
export interface GraphState {
  seq: number;
  generation: number;
  base: string;
}

export function graphError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers = {},
) {
  sendJson(
    res,
    status,
    {
      error: {
        code,
        message,
        innerError: {
          date: new Date().toISOString(),
          'request-id': randomBytes(8).toString('hex'),
        },
      },
    },
    headers,
  );
}

export function newId(): string {
  return `AAMk${randomBytes(30).toString('base64url')}`;
}

export function messageIdOf(mime: Buffer): string {
  const head = mime.subarray(0, 16_384).toString('latin1');
  const m = /^Message-ID:[ \t]*(<[^>\r\n]{1,500}>)/im.exec(head);
  return m?.[1] ?? `<${randomBytes(8).toString('hex')}@graph.test>`;
}

export function toJson(m: Message, select: string[] | null) {
  const all: Record<string, unknown> = {
    id: m.id,
    parentFolderId: m.folderId,
    internetMessageId: m.internetMessageId,
    categories: m.categories,
    flag: { flagStatus: m.flagStatus },
  };
  if (!select) return all;
  return Object.fromEntries(Object.entries(all).filter(([k]) => k === 'id' || select.includes(k)));
}

export function wellKnown(b: Mailbox, idOrName: string): Folder | undefined {
  const lower = idOrName.toLowerCase();
  for (const f of b.folders.values()) {
    if (f.id === idOrName) return f;
    if (lower === 'inbox' && f.displayName === 'Inbox' && f.parentId === 'root') return f;
    if (lower === 'msgfolderroot' && f.id === 'root') return f;
  }
  return undefined;
}

export function findChild(b: Mailbox, parentId: string, name: string): Folder | undefined {
  for (const f of b.folders.values())
    if (f.parentId === parentId && f.displayName.toLowerCase() === name.toLowerCase()) return f;
  return undefined;
}

export function moveMessage(
  state: GraphState,
  b: Mailbox,
  m: Message,
  destId: string,
  immutable: boolean,
): Message {
  if (m.folderId === destId) return m;
  const leftMap = b.left.get(m.folderId) ?? new Map<string, number>();
  b.left.set(m.folderId, leftMap);
  state.seq += 1;
  b.messages.delete(m.id);
  const moved: Message = { ...m, folderId: destId, seq: state.seq, id: immutable ? m.id : newId() };
  leftMap.set(m.id, state.seq);
  b.messages.set(moved.id, moved);
  return moved;
}

export function folderByPath(b: Mailbox, path: string): Folder | undefined {
  let parent = 'root';
  let f: Folder | undefined;
  for (const name of path.split('/').filter(Boolean)) {
    f = findChild(b, parent, name);
    if (!f) return undefined;
    parent = f.id;
  }
  return f;
}

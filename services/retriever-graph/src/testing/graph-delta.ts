import type { ServerResponse } from 'node:http';
import { sendJson } from '@trawl/oauth/testing';
import { type Folder, type GraphState, graphError, type Mailbox, toJson } from './graph-mailbox.ts';

// The test Graph server's message delta of a folder: pages, skip and delta tokens, @removed, 410.

interface DeltaState {
  /** Changes after this sequence belong to the round. */
  since: number;
  /** The round covers changes up to this sequence. */
  upto: number;
  /** The sequence the next page starts after. */
  offset: number;
  folder: string;
  mailbox: string;
  /** The token generation it was minted in (expireDeltaTokens starts a new one). */
  minted: number;
}

const encodeToken = (s: DeltaState) => Buffer.from(JSON.stringify(s)).toString('base64url');
const decodeToken = (t: string): DeltaState | null => {
  try {
    return JSON.parse(Buffer.from(t, 'base64url').toString('utf8')) as DeltaState;
  } catch {
    return null;
  }
};

export function delta(
  state: GraphState,
  res: ServerResponse,
  b: Mailbox,
  address: string,
  folder: Folder,
  url: URL,
  prefer: string,
) {
  const pageSize = Number(/odata\.maxpagesize=(\d+)/.exec(prefer)?.[1] ?? 10);
  const skip = url.searchParams.get('$skiptoken');
  const dtoken = url.searchParams.get('$deltatoken');
  let st: DeltaState;
  if (skip || dtoken) {
    const t = decodeToken((skip ?? dtoken) as string);
    if (!t || t.folder !== folder.id || t.mailbox !== address)
      return graphError(res, 400, 'BadRequest', 'Invalid delta token.');
    if (t.minted < state.generation)
      return graphError(
        res,
        410,
        'SyncStateNotFound',
        'The sync state generation is not found. The delta token is expired and data must be synchronized again.',
      );
    st = skip ? t : { ...t, since: t.upto, upto: state.seq, offset: t.upto };
  } else {
    st = {
      since: 0,
      upto: state.seq,
      offset: 0,
      folder: folder.id,
      mailbox: address,
      minted: state.generation,
    };
  }
  // Pages continue after the last change they gave (what a skip token stands for), so a page
  // asked again after its messages moved out still gives the ones after them.
  const entries: { seq: number; json: unknown }[] = [...b.messages.values()]
    .filter((m) => m.folderId === folder.id && m.seq > st.offset && m.seq <= st.upto)
    .map((m) => ({ seq: m.seq, json: toJson(m, ['internetMessageId', 'parentFolderId']) }));
  if (st.since > 0)
    for (const [id, at] of b.left.get(folder.id) ?? new Map<string, number>())
      if (at > st.offset && at <= st.upto && b.messages.get(id)?.folderId !== folder.id)
        entries.push({ seq: at, json: { id, '@removed': { reason: 'deleted' } } });
  entries.sort((x, y) => x.seq - y.seq);
  const page = entries.slice(0, pageSize);
  const more = entries.length > pageSize;
  const link = `${state.base}/v1.0/users/${encodeURIComponent(address)}/mailFolders/${folder.id}/messages/delta`;
  const body: Record<string, unknown> = {
    '@odata.context': `${state.base}/v1.0/$metadata#Collection(message)`,
    value: page.map((e) => e.json),
  };
  const after = page.at(-1)?.seq ?? st.offset;
  if (more)
    body['@odata.nextLink'] =
      `${link}?$skiptoken=${encodeToken({ ...st, offset: after, minted: state.generation })}`;
  else
    body['@odata.deltaLink'] =
      `${link}?$deltatoken=${encodeToken({ ...st, minted: state.generation })}`;
  sendJson(res, 200, body);
}

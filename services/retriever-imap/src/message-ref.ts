/**
 * A retriever message id: `<uidvalidity>.<uid>[.<base64url Message-ID>]`. The Message-ID lets a
 * verdict find the message after it moved (and after a restart of the retriever).
 */
export interface MessageRef {
  uidValidity: string;
  uid: number;
  messageId?: string;
}

const MAX_ID = 1000;

/** A message id from its UIDVALIDITY, UID and Message-ID. */
export function formatRef(r: MessageRef): string {
  const base = `${r.uidValidity}.${r.uid}`;
  if (!r.messageId) return base;
  const full = `${base}.${Buffer.from(r.messageId, 'utf8').toString('base64url')}`;
  return full.length <= MAX_ID ? full : base;
}

/** Reads a message id; null when it is not one. */
export function parseRef(id: string): MessageRef | null {
  const m = /^(\d{1,20})\.(\d{1,10})(?:\.([A-Za-z0-9_-]+))?$/.exec(id);
  if (!m?.[1] || !m[2]) return null;
  const uid = Number(m[2]);
  if (!Number.isSafeInteger(uid) || uid <= 0) return null;
  return {
    uidValidity: m[1],
    uid,
    ...(m[3] ? { messageId: Buffer.from(m[3], 'base64url').toString('utf8') } : {}),
  };
}

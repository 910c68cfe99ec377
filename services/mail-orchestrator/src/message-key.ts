import { createHash } from 'node:crypto';

const MAX_HEADER_BYTES = 256 * 1024;

/** The Message-ID header of a raw RFC 822 message (unfolded, trimmed), or undefined. */
export function messageIdOf(raw: Buffer): string | undefined {
  const head = raw.subarray(0, Math.min(raw.length, MAX_HEADER_BYTES)).toString('latin1');
  const end = head.search(/\r?\n\r?\n/);
  const section = end >= 0 ? head.slice(0, end) : head;
  const unfolded = section.replace(/\r?\n[ \t]+/g, ' ');
  for (const line of unfolded.split(/\r?\n/)) {
    const m = /^message-id[ \t]*:(.*)$/i.exec(line);
    if (m?.[1] !== undefined) {
      const v = m[1].trim();
      const angle = /<([^<>]+)>/.exec(v);
      const id = (angle?.[1] ?? v).trim();
      if (id.length > 0) return id;
    }
  }
  return undefined;
}

/**
 * The dedup key of a message: a hash of its Message-ID, else a hash of its bytes. Hashed so that a
 * hostile Message-ID cannot make long or odd cache keys.
 */
export function messageKey(raw: Buffer): { key: string; by: 'message-id' | 'content' } {
  const mid = messageIdOf(raw);
  if (mid !== undefined) {
    return { key: createHash('sha256').update(`mid:${mid}`).digest('hex'), by: 'message-id' };
  }
  return { key: createHash('sha256').update('raw:').update(raw).digest('hex'), by: 'content' };
}

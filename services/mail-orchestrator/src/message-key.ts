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
 * The dedup key of a message: SHA-256 of its raw bytes (hex).
 *
 * Not the Message-ID: the sender writes it, so a benign message and then a phish carrying the same
 * Message-ID would make the phish a "duplicate" and it would never be analysed. What dedup must
 * absorb is redelivery (at least once: an ack lost, a retried push, a replica crash), and a
 * retriever redelivers the same bytes (IMAP hands out the stored message as it is). Any change of a
 * byte makes another key: at worst a message is analysed twice, never not at all.
 */
export function messageKey(raw: Buffer): { key: string } {
  return { key: createHash('sha256').update('raw:').update(raw).digest('hex') };
}

/** SHA-256 (hex) of the raw bytes: the reference of a message that has no job (`unanalyzed`). */
export function contentHash(raw: Buffer): string {
  return createHash('sha256').update(raw).digest('hex');
}

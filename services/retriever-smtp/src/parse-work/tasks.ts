import type { Email, EmailLimits } from '@trawl/contracts';
import { parseRawEmail } from '@trawl/mail';

/** A message to parse: plain data, so that a worker thread can take it. */
export interface ParseInput {
  bytes: Uint8Array;
  limits: EmailLimits;
  maxBytes: number;
  envelopeTo?: string[];
}

/** The raw message as an Email: the same call on the milter's thread and in a worker. */
export function parseTask(input: ParseInput): Promise<Email> {
  const raw = Buffer.from(input.bytes.buffer, input.bytes.byteOffset, input.bytes.byteLength);
  return parseRawEmail(raw, {
    limits: input.limits,
    maxBytes: input.maxBytes,
    ...(input.envelopeTo?.length ? { envelope: { to: input.envelopeTo } } : {}),
  });
}

/** The tasks a worker of the parse pool serves. */
export const PARSE_TASKS = { parse: parseTask } as const;

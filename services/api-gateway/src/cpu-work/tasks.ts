import { type Email, type EmailLimits, type JobReport, safeParseEmail } from '@trawl/contracts';
import { isOutlookMsg, outlookMsgToEml, parseRawEmail } from '@trawl/mail';
import { type SerializedEmail, serializeEmail } from '../email-json.ts';
import { messageViewOf } from '../message-view.ts';
import { reportedEmail } from '../report-intake.ts';

/** A raw submission to parse (POST /analyze/raw): plain data, so that a worker can take it. */
export interface ParseRawInput {
  bytes: Uint8Array;
  limits: EmailLimits;
  maxBytes: number;
  /** The parser's own time bound (its 422 TRAWL_ERR_MAIL_UNPARSEABLE). */
  timeoutMs?: number;
  envelopeTo?: string[];
  /** The message is a report: its original is what is analysed (issue 16). */
  report?: { now: Date };
}

export interface ParseRawOutput {
  /**
   * The Email, when parsed on this thread; a worker sends only its row text back (`serialized`):
   * copying a large Email across threads twice (object and text) cost the HTTP thread tens of ms.
   */
  email?: Email;
  report?: JobReport;
  /** The Email's id and row text, computed where it was parsed (a worker, for a large message). */
  serialized: SerializedEmail;
}

/**
 * The CPU-heavy part of a raw submission: an Outlook .msg becomes the RFC 822 message it holds, the
 * message is parsed into an Email and, for a report, its original extracted. The same code runs on
 * the HTTP thread (small messages) and in a worker (large ones).
 */
export async function parseRawTask(input: ParseRawInput): Promise<ParseRawOutput> {
  const raw = Buffer.from(input.bytes.buffer, input.bytes.byteOffset, input.bytes.byteLength);
  const bytes = isOutlookMsg(raw) ? outlookMsgToEml(raw) : raw;
  const parseOpts = {
    limits: input.limits,
    maxBytes: input.maxBytes,
    ...(input.timeoutMs !== undefined ? { timeoutMs: input.timeoutMs } : {}),
  };
  const email = await parseRawEmail(bytes, {
    ...parseOpts,
    ...(input.envelopeTo ? { envelope: { to: input.envelopeTo } } : {}),
  });
  if (!input.report) return { email, serialized: serializeEmail(email) };
  const r = await reportedEmail(email, parseOpts, input.report.now);
  return { ...r, serialized: serializeEmail(r.email) };
}

/**
 * The message view of a stored job (GET /analyze/{id}/message: sanitized HTML, text, hashes) as
 * the JSON text of the answer, from the job row's Email (its JSON text, or a value a driver parsed):
 * reading, validating, sanitizing and serializing a large message all happen where this runs.
 * null when the stored Email is unreadable.
 */
export function messageViewTask(input: { jobId: string; stored: unknown }): string | null {
  let value = input.stored;
  try {
    if (typeof value === 'string') value = JSON.parse(value);
  } catch {
    return null;
  }
  const r = safeParseEmail(value);
  if (!r.success) return null;
  return JSON.stringify(messageViewOf(input.jobId, r.data));
}

/** parseRawTask without the Email object: what a worker sends back (the row text holds it). */
async function parseRawRowTask(input: ParseRawInput): Promise<ParseRawOutput> {
  const { report, serialized } = await parseRawTask(input);
  return report ? { report, serialized } : { serialized };
}

/** The handlers a CPU worker serves, by task name. */
export const CPU_TASKS = {
  parseRaw: parseRawTask,
  parseRawRow: parseRawRowTask,
  messageView: messageViewTask,
} as const;

import { ThreatLevel } from '@trawl/contracts';
import { z } from 'zod';
import { LlmBadAnswerError } from './errors.ts';

/** The JSON the model must answer. */
export const LlmVerdict = z.object({
  is_phishing: z.boolean(),
  confidence: z.number().min(0).max(1),
  threat_level: ThreatLevel.optional(),
  reasons: z.array(z.string().max(2000)).max(20).default([]),
  summary: z.string().max(2000).optional(),
  indicators: z
    .array(
      z.object({
        type: z.string().regex(/^[a-z0-9_.-]{1,64}$/),
        value: z.string().max(2000),
        confidence: z.number().min(0).max(1),
      }),
    )
    .max(20)
    .optional(),
});
export type LlmVerdict = z.output<typeof LlmVerdict>;

/** Strips a Markdown code fence some models put around JSON. */
export function unfence(text: string): string {
  const t = text.trim();
  // what /^```(?:json)?\s*([\s\S]*?)\s*```$/i captures, without its retries on a long run of
  // white space: "json" (any case) after the opening fence belongs to it
  if (t.length < 6 || !t.startsWith('```') || !t.endsWith('```')) return t;
  const open = t.slice(3, 7).toLowerCase() === 'json' ? 7 : 3;
  return t.slice(open, t.length - 3).trim();
}

/** Parses and validates the model's content; throws LlmBadAnswerError on any problem. */
export function parseVerdict(content: unknown): LlmVerdict {
  if (typeof content !== 'string' || content.trim() === '') {
    throw new LlmBadAnswerError('the answer carries no message content');
  }
  let json: unknown;
  try {
    json = JSON.parse(unfence(content));
  } catch {
    throw new LlmBadAnswerError(`not JSON (starts with ${JSON.stringify(content.slice(0, 60))})`);
  }
  const r = LlmVerdict.safeParse(json);
  if (!r.success) {
    const where = r.error.issues
      .slice(0, 5)
      .map((i) => `/${i.path.map(String).join('/')} ${i.message}`)
      .join('; ');
    throw new LlmBadAnswerError(`wrong shape: ${where}`);
  }
  return r.data;
}

/** The JSON shape described to the model, in the system message. */
export const VERDICT_SHAPE = `{"is_phishing": boolean, "confidence": number between 0 and 1 (how sure you are of is_phishing), "threat_level": "none"|"low"|"medium"|"high"|"critical", "reasons": [short strings, at most 8], "summary": "one sentence"}`;

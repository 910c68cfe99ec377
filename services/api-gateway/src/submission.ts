import type { EmailParser } from '@trawl/contracts';
import { z } from 'zod';
import { isPlainObject } from './plain-object.ts';

const WORKFLOW_MAX = 128;

/** The body of `POST /api/v1/analyze`: `{email, workflow_id?, report?}`. */
function submissionSchema(emailSchema: EmailParser['schema']) {
  return z.object({
    email: emailSchema,
    workflow_id: z.string().min(1).max(WORKFLOW_MAX).optional(),
    /** A report to a reporting mailbox: the original inside `email` is analysed (issue 16). */
    report: z.boolean().optional(),
  });
}

export type Submission = z.output<ReturnType<typeof submissionSchema>>;

/**
 * The submission schema's answers: the common case (an Email the parser's fast path takes, a valid
 * or absent workflow_id) without zod; anything else, and every refusal with its problems, by zod.
 */
export function submissionParser(parser: EmailParser) {
  const schema = submissionSchema(parser.schema);
  return {
    schema,
    safeParse(body: unknown): z.ZodSafeParseResult<Submission> {
      if (isPlainObject(body)) {
        const w = body.workflow_id;
        if (
          body.report === undefined &&
          (w === undefined || (typeof w === 'string' && w.length >= 1 && w.length <= WORKFLOW_MAX))
        ) {
          const e = parser.safeParse(body.email);
          if (e.success) {
            const data: Submission =
              w === undefined ? { email: e.data } : { email: e.data, workflow_id: w };
            return { success: true, data };
          }
        }
      }
      return schema.safeParse(body);
    },
  };
}

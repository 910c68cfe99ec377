import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { objectKeys } from '../../src/fast-path.ts';
import {
  AnalyzerAnswer,
  analyzerAnswerFastPathCovers,
  createEmailSchema,
  emailFastPathCovers,
  Indicator,
  StageContext,
  stageContextFastPathCovers,
} from '../../src/index.ts';

// The hand-written fast paths copy the keys they know: a key added to a schema would be dropped by
// them (zod keeps it). Each fast path lists its keys; these tests fail until a schema's keys and
// its fast path's agree, and the fast path is off (every input through zod) while they do not.

describe('the fast validators know every key of their schemas', () => {
  it('Email (emailParser, safeParseEmail): the email, its headers and its attachments', () => {
    expect(emailFastPathCovers(createEmailSchema())).toBe(true);
  });

  it('AnalyzerAnswer (safeParseAnalyzerAnswer) and its indicators', () => {
    expect(analyzerAnswerFastPathCovers()).toBe(true);
  });

  it('StageContext (safeParseStageContext), its analyzer results and their indicators', () => {
    expect(stageContextFastPathCovers()).toBe(true);
  });
});

describe('a key the fast path does not know switches it off', () => {
  const extra = { reported_by: z.string().optional() };

  it('at each level of the Email', () => {
    const email = createEmailSchema();
    expect(emailFastPathCovers(email.safeExtend(extra))).toBe(false);
    const headers = email.shape.headers.extend(extra);
    expect(emailFastPathCovers(email.safeExtend({ headers }))).toBe(false);
  });

  it('in an answer and in its indicators', () => {
    expect(analyzerAnswerFastPathCovers(AnalyzerAnswer.extend(extra))).toBe(false);
    const indicators = z.array(Indicator.extend(extra));
    expect(analyzerAnswerFastPathCovers(AnalyzerAnswer.extend({ indicators }))).toBe(false);
  });

  it('in a stage context', () => {
    expect(stageContextFastPathCovers(StageContext.extend(extra))).toBe(false);
  });

  it('reads the keys through transforms, defaults, optionals and arrays', () => {
    const inner = z.object({ a: z.string(), b: z.number().optional() });
    expect(
      objectKeys(
        z
          .array(inner.transform((x) => x))
          .optional()
          .default([]),
      ),
    ).toEqual(['a', 'b']);
    expect(objectKeys(z.string())).toEqual([]);
  });
});

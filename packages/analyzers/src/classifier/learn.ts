import type { Email } from '@trawl/contracts';
import type { ClassifierRepository, ClassifierTotals, TokenCounts } from '@trawl/platform';
import type { LearnLabel } from './model.ts';
import { TOKENIZER, tokensOf } from './tokenize.ts';

type Learner = Pick<ClassifierRepository, 'apply'>;

/** The change of learning (`sign` 1) or unlearning (−1) messages' tokens. */
function changeOf(
  messages: Iterable<{ tokens: readonly number[]; label: LearnLabel }>,
  sign: 1 | -1,
) {
  const tokens = new Map<number, [number, number]>();
  let phishing = 0;
  let ham = 0;
  for (const m of messages) {
    const k = m.label === 'phishing' ? 0 : 1;
    if (k === 0) phishing += sign;
    else ham += sign;
    for (const t of m.tokens) {
      let c = tokens.get(t);
      if (!c) {
        c = [0, 0];
        tokens.set(t, c);
      }
      c[k] += sign;
    }
  }
  return { tokenizer: TOKENIZER, tokens: tokens as Map<number, TokenCounts>, phishing, ham };
}

/** Learns one message as `label` (the feedback work calls this when an analyst gives a verdict). */
export function learn(store: Learner, email: Email, label: LearnLabel): Promise<ClassifierTotals> {
  return store.apply(changeOf([{ tokens: tokensOf(email), label }], 1));
}

/**
 * Unlearns one message learnt as `label` (changed feedback: unlearn the old label, learn the new
 * one). Counts never go below 0.
 */
export function unlearn(
  store: Learner,
  email: Email,
  label: LearnLabel,
): Promise<ClassifierTotals> {
  return store.apply(changeOf([{ tokens: tokensOf(email), label }], -1));
}

/** Learns many messages' tokens in one change (bulk training writes a batch at a time). */
export function learnMany(
  store: Learner,
  messages: Iterable<{ tokens: readonly number[]; label: LearnLabel }>,
): Promise<ClassifierTotals> {
  return store.apply(changeOf(messages, 1));
}

import type { AnalyzerAnswerInput, Email } from '@trawl/contracts';
import { answerFrom, type Finding } from '../shared/score.ts';
import { classifierUnavailable } from './errors.ts';
import { type Classification, classify } from './model.ts';
import type { ClassifierSettings } from './settings.ts';
import type { CachedSource } from './source.ts';
import { CLASSIFIER_SYMBOLS } from './symbols.ts';
import { TOKENIZER, tokensOf } from './tokenize.ts';

const r3 = (n: number) => Math.round(n * 1000) / 1000;

/** What the classifier's probability is worth to the scorer: one symbol, bounded, or none. */
export function findingFor(c: Classification, s: ClassifierSettings): Finding | undefined {
  if (c.used < s.min_tokens) return undefined;
  const p = c.probability;
  if (p >= s.phishing_probability) {
    const weight = r3(s.weights.bayes_phish * Math.min(1, Math.max(0, 2 * p - 1)));
    return {
      type: 'learned_text',
      value: `like the phishing learnt here (p=${r3(p)})`,
      weight,
      symbol: 'bayes_phish',
    };
  }
  if (p <= s.ham_probability) {
    const weight = r3(s.weights.bayes_ham * Math.min(1, Math.max(0, 1 - 2 * p)));
    return {
      type: 'learned_text',
      value: `like the legitimate mail learnt here (p=${r3(p)})`,
      weight,
      symbol: 'bayes_ham',
    };
  }
  return undefined;
}

/**
 * The `classifier` analyzer: the message's tokens classified against the learnt state. Abstains
 * (no symbol, `available: false`) without a state, while fewer than the minimum messages of either
 * class are learnt, or when the state was learnt with another tokeniser.
 */
export async function analyzeClassifier(
  email: Email,
  s: ClassifierSettings,
  source: CachedSource | undefined,
): Promise<AnalyzerAnswerInput> {
  const abstain = (why: string, details: Record<string, unknown> = {}) => {
    const a = answerFrom([], {
      base: 0.1,
      threshold: s.phishing_score_threshold,
      name: 'classifier',
      groups: CLASSIFIER_SYMBOLS,
      details: { available: false, reason: why, ...details },
    });
    a.summary = `classifier: abstains (${why})`;
    return a;
  };
  if (!source) return abstain('no learnt state here');
  let totals: Awaited<ReturnType<CachedSource['totals']>>;
  try {
    totals = await source.totals();
  } catch (e) {
    throw classifierUnavailable(e);
  }
  const learnt = { phishing: totals.phishing, ham: totals.ham, version: totals.version };
  if (totals.phishing < s.min_phishing_messages || totals.ham < s.min_ham_messages)
    return abstain(
      `learnt ${totals.phishing} phishing and ${totals.ham} legitimate messages, needs ${s.min_phishing_messages} and ${s.min_ham_messages}`,
      { learnt },
    );
  if (totals.tokenizer !== TOKENIZER)
    return abstain(`state learnt with tokeniser ${totals.tokenizer}, this is ${TOKENIZER}`, {
      learnt,
    });
  const tokens = tokensOf(email);
  let counts: (t: number) => readonly [number, number] | undefined;
  try {
    counts = await source.lookup(tokens);
  } catch (e) {
    throw classifierUnavailable(e);
  }
  const c = classify(tokens, counts, totals);
  const f = findingFor(c, s);
  const answer = answerFrom(f ? [f] : [], {
    base: 0.1,
    threshold: s.phishing_score_threshold,
    name: 'classifier',
    groups: CLASSIFIER_SYMBOLS,
    details: {
      available: true,
      probability: r3(c.probability),
      tokens: tokens.length,
      used: c.used,
      learnt,
    },
  });
  answer.summary = `classifier: p=${r3(c.probability)} from ${c.used} telling tokens${f ? ` (${f.symbol} ${f.weight})` : ''}`;
  return answer;
}

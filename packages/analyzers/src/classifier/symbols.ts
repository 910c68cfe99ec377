import { defineSymbols } from '../shared/symbols.ts';

/**
 * The classifier's symbols. The declared score is the most it adds: the analyzer reports
 * score × (2p − 1) for phishing (p ≥ `phishing_probability`) and score × (1 − 2p) for legitimate
 * mail (p ≤ `ham_probability`), and the `learned` group bounds it again (+2.5 / −0.5): what one
 * deployment's mail taught never outweighs a technique by itself.
 */
export const CLASSIFIER_SYMBOLS = defineSymbols({
  bayes_phish: {
    score: 2.5,
    group: 'learned',
    reason:
      'its words, links and sender look like the phishing this deployment has learnt (statistical classifier)',
  },
  bayes_ham: {
    // −1.5 made the leave-one-source-out recall of nazario-2022 worse (0.859 → 0.791): learnt
    // ham of another era looks like nothing modern phishing says; −0.5 keeps every fold at least
    // as good (docs/evaluation.md, 2026-11-27)
    score: -0.5,
    group: 'learned',
    reason:
      'its words, links and sender look like the legitimate mail this deployment has learnt (statistical classifier)',
  },
});

import { readFileSync } from 'node:fs';
import { parseRawEmail } from '@trawl/mail';
import { findingFor } from '../classifier/analyzer.ts';
import { MemoryModel } from '../classifier/model.ts';
import { ClassifierSettings } from '../classifier/settings.ts';
import { tokensOf } from '../classifier/tokenize.ts';
import type { ScoreTable } from '../scorer/combine.ts';
import { type CrossRow, looFolds, type Worst, worstOf } from './cross.ts';
import { EVAL_ENVELOPE } from './eval-message.ts';
import { type RescoreSettings, rescore } from './rescore.ts';
import {
  countOutcomes,
  formatSourceTable,
  type SourcedOutcome,
  type SourceRow,
} from './run-eval.ts';

/**
 * `--cross --learn`: for each held-out source, a classifier learnt in memory from the other sources'
 * messages, its bounded symbol added to the held-out messages' evidence, re-scored offline with the
 * shipped defaults; beside it the same rows without the classifier. The tokens come from a second
 * pass over the files (the normal eval does not tokenise).
 */
interface LearnRow extends CrossRow {
  /** Messages the fold's classifier learnt, per class. */
  learnt: { phishing: number; ham: number };
  /** The classifier abstained (fewer than the minimum of a class). */
  abstained: boolean;
  /** Held-out messages that got a classifier symbol. */
  fired: number;
}

export interface LearnReport {
  learned: LearnRow[];
  off: CrossRow[];
  worst: { learned: Worst; off: Worst };
}

/** Tokens of each outcome's message (null when it does not parse). */
export async function tokensOfFiles(
  paths: readonly string[],
  onProgress?: (done: number, total: number) => void,
): Promise<(number[] | null)[]> {
  const out: (number[] | null)[] = [];
  for (const [i, p] of paths.entries()) {
    try {
      out.push(tokensOf(await parseRawEmail(readFileSync(p), { envelope: EVAL_ENVELOPE })));
    } catch {
      out.push(null);
    }
    onProgress?.(i + 1, paths.length);
  }
  return out;
}

export function crossLearn(
  outs: readonly SourcedOutcome[],
  tokens: readonly (number[] | null)[],
  o: { defaults: ScoreTable; settings: RescoreSettings; classifier?: unknown },
): LearnReport {
  const s = ClassifierSettings.parse(o.classifier ?? {});
  const indexed = outs.map((x, i) => ({ ...x, at: i }));
  const learned: LearnRow[] = [];
  const off: CrossRow[] = [];
  for (const f of looFolds(indexed)) {
    const m = new MemoryModel();
    for (const x of f.train) {
      const t = tokens[x.at];
      if (t) m.train(t, x.label === 'phishing' ? 'phishing' : 'legitimate');
    }
    const abstained = m.phishing < s.min_phishing_messages || m.ham < s.min_ham_messages;
    let fired = 0;
    const test = f.test.map((x) => {
      const t = tokens[x.at];
      const fd = !abstained && t ? findingFor(m.classify(t), s) : undefined;
      if (!fd) return x;
      fired++;
      const key = `classifier.${fd.symbol}`;
      return {
        ...x,
        symbols: [...x.symbols, key],
        scores: { ...x.scores, [key]: fd.weight },
        groups: { ...x.groups, [key]: 'learned' },
      };
    });
    learned.push({
      source: f.heldOut,
      counts: countOutcomes(rescore(test, o.defaults, o.settings)),
      trainedOn: [...new Set(f.train.map((x) => x.source))],
      learnt: { phishing: m.phishing, ham: m.ham },
      abstained,
      fired,
    });
    off.push({ source: f.heldOut, counts: countOutcomes(rescore(f.test, o.defaults, o.settings)) });
  }
  return {
    learned,
    off,
    worst: { learned: worstOf(learned), off: worstOf(off) },
  };
}

const f3 = (n: number) => n.toFixed(3);

export function formatCrossLearn(r: LearnReport): string[] {
  const rows: SourceRow[] = [];
  for (const [i, l] of r.learned.entries()) {
    rows.push({ source: r.off[i]!.source, filter: 'off', counts: r.off[i]!.counts });
    rows.push({
      source: l.source,
      filter: 'learn',
      counts: l.counts,
      note: l.abstained
        ? `abstained: learnt ${l.learnt.phishing} phishing, ${l.learnt.ham} ham`
        : `learnt ${l.learnt.phishing} phishing + ${l.learnt.ham} ham from ${l.trainedOn?.join(' + ')}; fired on ${l.fired}`,
    });
  }
  const w = (t: string, x: Worst) =>
    `${t}${x.recall ? `recall ${f3(x.recall.value)} (${x.recall.source})` : 'recall —'}, ${x.fpr ? `FPR ${f3(x.fpr.value)} (${x.fpr.source})` : 'FPR —'}`;
  return [
    'cross-source with learning (leave-one-source-out): learn = a classifier learnt on the other sources, its bounded symbol added to the shipped defaults; off = the shipped defaults alone',
    ...formatSourceTable(rows, 'held out'),
    w('worst source, with learning: ', r.worst.learned),
    w('worst source, without:       ', r.worst.off),
  ];
}

import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { cliOptions, findRepoRoot } from '@trawl/config';
import { crossEvaluate, formatCross } from '../eval/cross.ts';
import { crossLearn, formatCrossLearn, tokensOfFiles } from '../eval/cross-learn.ts';
import { type FitOptions, fitTable, fitWeights, weightsYaml } from '../eval/fit-weights.ts';
import { loadEvalConfig } from '../eval/load-config.ts';
import { type PeerRun, parsePeer, runPeer } from '../eval/peer.ts';
import { type RescoreSettings, rescore, tableOf } from '../eval/rescore.ts';
import {
  countOutcomes,
  countsBySource,
  defaultWorkers,
  formatReport,
  formatSourceTable,
  listCorpus,
  metricsOf,
  runEval,
  type SourceRow,
} from '../eval/run-eval.ts';
import { builtinAnalyzers } from '../registry.ts';
import { ScorerSettings } from '../scorer/settings.ts';
import { parseWeights } from '../scorer/weights.ts';

const USAGE = `usage: pnpm eval <dir> [<dir> …] [--workflow id] [--json out.json] [--config service.yaml] [--workflows workflows.yaml] [--concurrency n] [--workers n] [--limit n-per-class] [--by-class] [--forged] [--cross [--learn]] [--fit-weights out.yaml [--split] [--allow-negative] [--fixed-bias] [--l2 λ]] [--peer rspamd=URL [--peer-concurrency n] [--peer-timeout ms]]
  <dir>                each holds phishing/*.eml and/or ham/*.eml; each directory is one source (its name)
  --by-class           each class folder is its own source (corpus/phishing, corpus/ham)
  --forged             also run every phishing message with each forgery an attacker can write
                       (list headers, a thread, an X-Mailer, Authentication-Results below the
                       trusted hop, his own ARC seal, a report structure, a Sender, an on-behalf
                       Reply-To) and print the recall of each beside the recall as sent
  --workers n          worker threads (default: available cores)
  --cross              leave-one-source-out: weights fitted on the other sources, tested on each one,
                       beside the shipped defaults; the worst source is the headline
  --learn              with --cross: also learn the classifier on the other sources and show each
                       held-out source with and without its symbol
  --classifier-state f run the classifier with a state exported by \`trawl learn --export\`
  --fit-weights f      fit the symbol scores toward their declared scores on all the given mail and
                       write a weights file to f (the tool an operator runs on their own labelled mail)
  --split              with --fit-weights: train on the even-numbered files only, report the odd ones
  --allow-negative     with --fit-weights/--cross: symbols declared ≥ 0 may be fitted below 0
  --fixed-bias         with --fit-weights/--cross: keep the weights file's bias, fit the symbols only
  --l2 λ               strength of the pull toward the declared scores (default 300)
  --peer rspamd=URL    also send every message to a running Rspamd (POST URL/checkv2) and print its
                       row beside Trawl's per source
  --peer-concurrency n requests in flight to the peer (default 8)
  --peer-timeout ms    per-message timeout of the peer (default 30000)`;

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      ...cliOptions(
        [
          'workflow',
          'json',
          'config',
          'workflows',
          'concurrency',
          'limit',
          'workers',
          'classifier-state',
          'fit-weights',
          'l2',
          'peer',
          'peer-concurrency',
          'peer-timeout',
        ],
        ['by-class', 'cross', 'learn', 'split', 'allow-negative', 'fixed-bias', 'forged'],
      ),
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help || positionals.length === 0) {
    process.stderr.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const peer = values.peer ? parsePeer(values.peer) : undefined;
  const l2 = values.l2 !== undefined ? Number(values.l2) : undefined;
  if (l2 !== undefined && !(l2 >= 0)) throw new Error(`--l2 ${values.l2}: a number ≥ 0 expected`);
  const root = findRepoRoot();
  const cfg = loadEvalConfig(root, {
    ...(values.config ? { service: resolve(values.config) } : {}),
    ...(values.workflows ? { workflows: resolve(values.workflows) } : {}),
  });
  const workflowId = values.workflow ?? cfg.service.workflow.default_workflow_id;
  const dirs = positionals.map((d) => resolve(d));
  const limit = values.limit ? Number(values.limit) : undefined;
  const byClass = values['by-class'] ?? false;
  const tty = process.stderr.isTTY;
  const progress = (what: string) => (done: number, total: number) => {
    if (done % 100 === 0 || done === total) {
      process.stderr.write(
        `${tty ? '\r' : ''}${what}: ${done}/${total}${tty && done < total ? '' : '\n'}`,
      );
    }
  };
  const report = await runEval({
    dir: dirs[0]!,
    dirs,
    sourceByClass: byClass,
    workflowId,
    workflows: cfg.workflows,
    service: cfg.service,
    registry: builtinAnalyzers,
    concurrency: Number(values.concurrency ?? 4),
    workers: values.workers ? Math.max(1, Number(values.workers)) : defaultWorkers(),
    ...(limit !== undefined ? { limit } : {}),
    ...(values['classifier-state'] ? { classifierState: resolve(values['classifier-state']) } : {}),
    ...(values.forged ? { forged: true } : {}),
    onProgress: progress('eval'),
  });

  // the scorer's own settings and weights file: what the offline re-scoring and the fit start from
  const scorer = ScorerSettings.parse(cfg.service.analyzers.scorer?.settings ?? {});
  const weights = parseWeights(readFileSync(scorer.weights_file, 'utf8'), scorer.weights_file);
  const settings: RescoreSettings = {
    threshold: scorer.phishing_score_threshold,
    maxLogOdds: scorer.max_log_odds,
  };
  const fitOptions: FitOptions = {
    bias: weights.bias,
    groups: { ...weights.groups },
    types: { ...weights.types },
    settings,
    ...(l2 !== undefined ? { l2 } : {}),
    ...(values['allow-negative'] ? { allowNegative: true } : {}),
    ...(values['fixed-bias'] ? { fixedBias: true } : {}),
  };
  const extra: string[] = [];

  let peerRun: PeerRun | undefined;
  if (peer) {
    const items = listCorpus(dirs, {
      ...(limit !== undefined ? { limit } : {}),
      sourceByClass: byClass,
    });
    peerRun = await runPeer(
      peer,
      items.map((x) => x.path),
      {
        concurrency: values['peer-concurrency'] ? Number(values['peer-concurrency']) : 8,
        timeoutMs: values['peer-timeout'] ? Number(values['peer-timeout']) : 30_000,
        onProgress: progress(peer.name),
      },
    );
    const peerOuts = items.map((x, i) => ({
      source: x.source,
      label: x.label,
      predicted: peerRun!.verdicts[i]!.positive,
    }));
    const trawl = countsBySource(report.outcomes);
    const theirs = countsBySource(peerOuts);
    const errorsBy = new Map<string, number>();
    for (const [i, x] of items.entries())
      if (peerRun.verdicts[i]!.error) errorsBy.set(x.source, (errorsBy.get(x.source) ?? 0) + 1);
    const rows: SourceRow[] = [];
    for (const [source, c] of trawl) {
      rows.push({ source, filter: 'trawl', counts: c });
      const e = errorsBy.get(source);
      rows.push({
        source,
        filter: peer.name,
        counts: theirs.get(source) ?? countOutcomes([]),
        ...(e ? { note: `${e} error${e > 1 ? 's' : ''} (counted as negative)` } : {}),
      });
    }
    if (trawl.size > 1) {
      rows.push({ source: 'all', filter: 'trawl', counts: countOutcomes(report.outcomes) });
      rows.push({ source: 'all', filter: peer.name, counts: countOutcomes(peerOuts) });
    }
    const m = metricsOf(countOutcomes(peerOuts));
    extra.push(
      `peer ${peer.name} (${peer.url}; reject, add header, rewrite subject = phishing): ${items.length} messages in ${peerRun.seconds.toFixed(2)} s, ${peerRun.msgsPerS.toFixed(1)} msgs/s (${peerRun.concurrency} in flight), ${peerRun.errors} errors, ${peerRun.skipped} skipped`,
      ...formatSourceTable(rows, 'source'),
      `${peer.name}: precision=${m.precision.toFixed(3)} recall=${m.recall.toFixed(3)} F1=${m.f1.toFixed(3)} FPR=${m.fpr.toFixed(3)} msgs/s=${peerRun.msgsPerS.toFixed(1)}`,
    );
    const firstError = peerRun.verdicts.find((v) => v.error)?.error;
    if (firstError) extra.push(`  first ${peer.name} error: ${firstError}`);
  }

  if (values.cross) {
    if (report.sources.length < 2) {
      extra.push(
        'cross-source: needs at least two sources (give several directories, or --by-class)',
      );
    } else {
      const cross = crossEvaluate(report.outcomes, {
        defaults: tableOf(weights),
        settings,
        fit: fitOptions,
      });
      extra.push(...formatCross(cross));
      if (values.learn) {
        const items = listCorpus(dirs, {
          ...(limit !== undefined ? { limit } : {}),
          sourceByClass: byClass,
        });
        const tokens = await tokensOfFiles(
          items.map((x) => x.path),
          progress('tokens'),
        );
        extra.push(
          ...formatCrossLearn(
            crossLearn(report.outcomes, tokens, {
              defaults: tableOf(weights),
              settings,
              classifier: cfg.service.analyzers.classifier?.settings ?? {},
            }),
          ),
        );
      }
    }
  }

  if (values.json) {
    const out = peerRun ? { ...report, peer: peerRun } : report;
    writeFileSync(resolve(values.json), `${JSON.stringify(out, null, 2)}\n`);
  }

  const fitTo = values['fit-weights'];
  if (fitTo) {
    const split = values.split ?? false;
    const fit = fitWeights(report.outcomes, {
      ...fitOptions,
      ...(split ? { train: (o) => o.index % 2 === 0 } : {}),
    });
    const t = fit.train;
    const srcs = Object.entries(t.sources)
      .map(([s, k]) => `\n  ${s}: ${k.phishing} phishing, ${k.ham} ham`)
      .join('');
    const moved = Object.keys(fit.symbols).length;
    const header = `Scorer weights written by \`pnpm eval --fit-weights\` on ${new Date().toISOString().slice(0, 10)}.
This is the tool an operator runs on their own labelled mail: it adapts the scores the symbols
declare (\`pnpm trawl symbols\`) to that mail; it does not define them. Logistic regression of the
scorer's own model (group caps included), each source weighing the same and each class within a
source the same, regularised toward the declared scores (λ=${fit.lambda}): a symbol the mail says little
about keeps its declared score, and only symbols whose fitted score differs from the declared one by
0.1 or more are listed below.${fit.allowNegative ? ' --allow-negative: symbols declared ≥ 0 may be negative.' : ' Symbols keep the sign of their declared score.'}${values['fixed-bias'] ? " --fixed-bias: the bias is the weights file's." : ''}
Trained on ${split ? 'the even-numbered files of' : ''}${srcs}
${t.messages} messages, TP ${t.tp} FP ${t.fp} FN ${t.fn} TN ${t.tn} on them; ${moved} symbol${moved === 1 ? '' : 's'} moved.
Judge it on mail it was not fitted on (\`pnpm eval … --cross\`). Comments: declared score, training
messages where the symbol fired.`;
    writeFileSync(resolve(fitTo), weightsYaml(fit, header));
    process.stderr.write(`eval: weights written to ${fitTo}\n`);
    const table = fitTable(fit);
    const rows: SourceRow[] = [];
    if (split) {
      const odd = rescore(
        report.outcomes.filter((o) => o.index % 2 === 1),
        table,
        settings,
      );
      for (const [source, c] of countsBySource(odd))
        rows.push({ source, filter: 'odd (test)', counts: c });
    }
    const all = rescore(report.outcomes, table, settings);
    for (const [source, c] of countsBySource(all))
      rows.push({ source, filter: split ? 'all' : 'all (train)', counts: c });
    extra.push(
      `fitted weights (bias ${fit.bias}, ${moved} symbol${moved === 1 ? '' : 's'} moved; written to ${fitTo}), re-scored offline:`,
      ...formatSourceTable(rows, 'source'),
    );
  }

  process.stdout.write(`${formatReport(report, extra)}\n`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`eval failed: ${(err as Error).message}\n`);
    process.exit(1);
  },
);

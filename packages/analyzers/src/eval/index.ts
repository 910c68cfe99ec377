// The evaluation's entry point (`@trawl/analyzers/eval`): what `pnpm eval` runs, for the benchmarks
// that measure the analysis alone beside Trawl end to end (bench/e2e).
export {
  /** The analyzers the evaluation runs: the offline ones and the classifier. */
  builtinAnalyzers,
} from '../registry.ts';
export {
  /** The shipped (or given) service and workflow configuration, as the evaluation reads it. */
  loadEvalConfig,
} from './load-config.ts';
export {
  /** Runs the evaluation over corpus folders: detection figures and msgs/s. */
  runEval,
} from './run-eval.ts';

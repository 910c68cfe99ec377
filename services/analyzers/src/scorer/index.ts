import { defineAnalyzer } from '@trawl/plugin-sdk';
import { analyzeScore } from './analyzer.ts';
import { ScorerSettings } from './settings.ts';

export { analyzeScore, type Contribution, type EnsembleScore, ensembleScore } from './analyzer.ts';
export { DEFAULT_WEIGHTS_FILE, ScorerSettings } from './settings.ts';
export { parseWeights, ScorerWeights, weightsFor } from './weights.ts';

export const analyzer = defineAnalyzer({
  id: 'scorer',
  version: '1.0.0',
  description:
    'Ensemble of the earlier stages: sums the log-odds weight of every symbol the analyzers reported (weights in a YAML file) into one calibrated probability',
  settings: ScorerSettings,
  analyze: (email, { settings }) => analyzeScore(email, settings),
});

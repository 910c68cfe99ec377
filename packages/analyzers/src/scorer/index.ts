import { defineAnalyzer } from '@trawl/plugin-sdk';
import { analyzeScore } from './analyzer.ts';
import { ScorerSettings } from './settings.ts';

export { analyzeScore, ensembleScore } from './analyzer.ts';
export { ScorerSettings } from './settings.ts';
export { parseWeights, weightsFor } from './weights.ts';

export const analyzer = defineAnalyzer({
  id: 'scorer',
  version: '1.0.0',
  description:
    'Ensemble of the earlier stages: sums the log-odds weight of every symbol the analyzers reported (weights in a YAML file) into one calibrated probability',
  settings: ScorerSettings,
  analyze: (email, { settings }) => analyzeScore(email, settings),
});

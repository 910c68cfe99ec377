import { defineAnalyzer } from '@trawl/plugin-sdk';
import { analyzeContent } from './analyzer.ts';
import { ContentSettings } from './settings.ts';

export { analyzeContent } from './analyzer.ts';
export { ContentSettings } from './settings.ts';

export const analyzer = defineAnalyzer({
  id: 'content',
  version: '1.0.0',
  description:
    'Urgency, threat, reward, credential-request, payment and unsolicited-offer language (en, de, pt, nl, fr, es), sentiment, brands named versus the sender domain, text obfuscation',
  settings: ContentSettings,
  analyze: (email, { settings }) => analyzeContent(email, settings),
});

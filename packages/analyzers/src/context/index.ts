import { defineAnalyzer } from '@trawl/plugin-sdk';
import { analyzeContext } from './analyzer.ts';
import { ContextSettings } from './settings.ts';

export { analyzeContext } from './analyzer.ts';
export { requestLanguage } from './keywords.ts';
export { findInternalLookalike } from './lookalike.ts';
export { ContextSettings } from './settings.ts';

export const contextAnalyzer = defineAnalyzer({
  id: 'context',
  version: '1.0.0',
  description:
    'Indicators from context providers: VIP and staff impersonation, first-time senders asking for payment or credentials, look-alikes of internal domains, senders with past phishing',
  settings: ContextSettings,
  analyze: (email, { settings }) => analyzeContext(email, settings),
});

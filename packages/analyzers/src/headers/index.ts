import { defineAnalyzer } from '@trawl/plugin-sdk';
import { analyzeHeaders } from './analyzer.ts';
import { HeadersSettings } from './settings.ts';

export { analyzeHeaders } from './analyzer.ts';
export { HeadersSettings } from './settings.ts';

export const analyzer = defineAnalyzer({
  id: 'headers',
  version: '1.0.0',
  description:
    'SPF/DKIM/DMARC/ARC failures, From/Reply-To/Return-Path mismatches, display-name spoofing, look-alike sender domains, Message-ID and Date anomalies',
  settings: HeadersSettings,
  analyze: (email, { settings }) => analyzeHeaders(email, settings),
});

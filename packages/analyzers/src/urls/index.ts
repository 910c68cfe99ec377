import { defineAnalyzer } from '@trawl/plugin-sdk';
import { analyzeUrls } from './analyzer.ts';
import { UrlsSettings } from './settings.ts';

export { analyzeUrls } from './analyzer.ts';
export { UrlsSettings } from './settings.ts';

export const analyzer = defineAnalyzer({
  id: 'urls',
  version: '1.0.0',
  description:
    'IP, punycode and look-alike hosts, link text that shows another domain, shorteners, risky TLDs, credential forms, script URLs; never fetches',
  settings: UrlsSettings,
  analyze: (email, { settings }) => analyzeUrls(email, settings),
});

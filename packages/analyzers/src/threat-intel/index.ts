import { defineAnalyzer, defineContextProvider } from '@trawl/plugin-sdk';
import { analyzeIntel } from './analyzer.ts';
import { IntelAnalyzerSettings } from './analyzer-settings.ts';
import { ThreatIntel, type ThreatIntelDeps } from './intel.ts';
import { ThreatIntelSettings } from './settings.ts';

export { ThreatIntelData } from './data.ts';
export { THREAT_INTEL_ERROR_CODES } from './errors.ts';
export { ThreatIntel } from './intel.ts';
export { ThreatIntelSettings } from './settings.ts';

export interface ThreatIntelProviderDeps extends ThreatIntelDeps {
  /** The feed store (tests pass their own to await loads); default: a new one. */
  intel?: ThreatIntel;
}

/**
 * The `threat-intel` context provider: phishing and malware URL, domain and hash feeds (OpenPhish,
 * PhishTank, URLhaus, MISP feeds, a MISP instance's REST API) loaded in the background on a
 * schedule, and the message's links, their hosts and domains and its attachments' hashes looked up
 * in them. It fetches feeds only, never a URL found in a message, and never waits for a download:
 * until a first load succeeds it answers `available: false`.
 */
export function createThreatIntelProvider(deps: ThreatIntelProviderDeps = {}) {
  const intel =
    deps.intel ??
    new ThreatIntel({
      ...(deps.fetch ? { fetch: deps.fetch } : {}),
      ...(deps.log ? { log: deps.log } : {}),
    });
  return defineContextProvider({
    id: 'threat-intel',
    version: '1.0.0',
    description:
      'Phishing and malware URL, domain and hash feeds (OpenPhish, PhishTank, URLhaus, MISP feed and REST API), loaded in the background; matches of the message links, domains and attachment hashes',
    settings: ThreatIntelSettings,
    enrich(req, { settings, log }) {
      intel.configure(settings, log);
      const data = intel.enrich(req.email, settings.max_urls);
      return { data: { ...data }, ttl_seconds: settings.ttl_seconds };
    },
  });
}

/** The `intel` analyzer: the threat-intel provider's matches as indicators and scored symbols. */
export const intelAnalyzer = defineAnalyzer({
  id: 'intel',
  version: '1.0.0',
  description:
    'Indicators and symbols from the threat-intel provider: links, domains, hosts and attachments a phishing or malware feed lists',
  settings: IntelAnalyzerSettings,
  analyze: (email, { settings }) => analyzeIntel(email, settings),
});

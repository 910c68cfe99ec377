import { domainToUnicode } from 'node:url';
import { asciiHost } from '@trawl/mail';
import { getDomain, getDomainWithoutSuffix } from 'tldts';
import { editDistance, INTERNAL_FOLD, skeleton } from '../shared/similarity.ts';

export interface DomainLookalike {
  internal_domain: string;
  how: 'homoglyph' | 'typo' | 'other_suffix' | 'embedded_name' | 'deceptive_subdomain';
  confidence: number;
}

function split(host: string): { domain: string; label: string } | undefined {
  const ascii = asciiHost(host) ?? host.toLowerCase();
  const domain = getDomain(ascii, { allowPrivateDomains: false });
  const label = getDomainWithoutSuffix(ascii, { allowPrivateDomains: false });
  if (!domain || !label) return undefined;
  // compare what a reader sees: xn--exmple-cua → exämple
  const shown = domainToUnicode(`${label}.x`).slice(0, -2) || label;
  return { domain, label: shown };
}

/**
 * Whether `senderHost` imitates one of `internalDomains`: same name under another suffix, a label
 * within a small edit distance or with the same look-alike skeleton (`examp1e.org`), the internal
 * name embedded in a longer label (`example-payroll.com`), or the internal domain used as a
 * subdomain of another (`example.org.evil.net`). Exact matches and subdomains are not lookalikes.
 */
export function findInternalLookalike(
  senderHost: string,
  internalDomains: readonly string[],
): DomainLookalike | undefined {
  const host = senderHost.toLowerCase();
  const s = split(host);
  if (!s) return undefined;
  let best: DomainLookalike | undefined;
  const consider = (c: DomainLookalike) => {
    if (!best || c.confidence > best.confidence) best = c;
  };
  for (const raw of internalDomains) {
    const d = split(raw);
    if (!d) continue;
    if (s.domain === d.domain) return undefined; // the organisation's own domain
    if (host.startsWith(`${d.domain}.`)) {
      consider({ internal_domain: d.domain, how: 'deceptive_subdomain', confidence: 0.85 });
      continue;
    }
    if (s.label === d.label) {
      consider({ internal_domain: d.domain, how: 'other_suffix', confidence: 0.75 });
      continue;
    }
    if (
      d.label.length >= 4 &&
      skeleton(s.label, INTERNAL_FOLD) === skeleton(d.label, INTERNAL_FOLD)
    ) {
      consider({ internal_domain: d.domain, how: 'homoglyph', confidence: 0.9 });
      continue;
    }
    const max = d.label.length >= 8 ? 2 : d.label.length >= 4 ? 1 : 0;
    if (max > 0 && editDistance(s.label, d.label, max, true) <= max) {
      consider({ internal_domain: d.domain, how: 'typo', confidence: 0.8 });
      continue;
    }
    if (d.label.length >= 5 && s.label.split(/[-.]/).includes(d.label)) {
      consider({ internal_domain: d.domain, how: 'embedded_name', confidence: 0.6 });
    }
  }
  return best;
}

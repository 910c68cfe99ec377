import { createHash } from 'node:crypto';
import { documentLinksIn, type Email } from '@trawl/contracts';
import { extractUrls, urlsOfDocumentLinks } from '@trawl/mail';
import { hostLadder, isIpHost, normalizeHost, type UrlKeys, urlKeys } from './normalize.ts';

/** What of a message is looked up in the feeds. Nothing here is ever fetched. */
export interface Observables {
  urls: { written: string; keys: UrlKeys }[];
  /** Each distinct host of a link, with the names it is looked up by (itself up to its domain). */
  hosts: { host: string; registrable: string | undefined; ladder: string[]; ip: boolean }[];
  attachments: { filename: string; hashes: { type: 'md5' | 'sha1' | 'sha256'; hex: string }[] }[];
}

/**
 * With the links inside attachments (PDF, Office, calendar, QR codes) that the attachments
 * analyzer of an earlier stage reported: the provider never decodes attachments itself (it runs on
 * a thread that answers HTTP or consumes the queue), so they are looked up when the provider runs
 * in a stage after the one with the attachments analyzer (docs/analyzers.md, threat-intel).
 */
export function observe(email: Email, maxUrls: number): Observables {
  const urls: Observables['urls'] = [];
  const hosts = new Map<string, Observables['hosts'][number]>();
  for (const u of [
    ...extractUrls(email, { maxUrls }),
    ...urlsOfDocumentLinks(documentLinksIn(email.analysis_context), maxUrls),
  ]) {
    const keys = urlKeys(u.url);
    if (!keys) continue;
    urls.push({ written: u.url, keys });
    const host = normalizeHost(u.host) ?? keys.host;
    if (!hosts.has(host)) {
      const ip = u.isIp || isIpHost(host);
      const registrable = ip ? undefined : u.registrableDomain;
      hosts.set(host, {
        host,
        registrable,
        ladder: ip ? [host] : hostLadder(host, registrable),
        ip,
      });
    }
  }
  const attachments: Observables['attachments'] = [];
  for (const a of email.attachments ?? []) {
    const hashes: Observables['attachments'][number]['hashes'] = [];
    if (a.content !== undefined) {
      const bytes = Buffer.from(a.content, 'base64');
      for (const type of ['md5', 'sha1', 'sha256'] as const)
        hashes.push({ type, hex: createHash(type).update(bytes).digest('hex') });
    } else if (a.sha256) {
      hashes.push({ type: 'sha256', hex: a.sha256.toLowerCase() });
    }
    if (hashes.length > 0) attachments.push({ filename: a.filename, hashes });
  }
  return { urls, hosts: [...hosts.values()], attachments };
}

import type { Email } from '@trawl/contracts';
import type { Directory, Person } from './model.ts';
import { normalizeName, parseFromHeader } from './names.ts';

function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase();
}

/** True when `domain` is one of `domains` or a subdomain of one. */
function inDomains(domain: string, domains: readonly string[]): boolean {
  return domains.some((d) => domain === d || domain.endsWith(`.${d}`));
}

/**
 * What `/[^\s<>"]+@[^\s<>"]+/.exec(s)?.[0]` answers: the first run of characters other than white
 * space, `<`, `>` and `"` with an `@` that has a character of the run before and after it (the
 * match takes the whole run). The regex read each long run without such an `@` again from each of
 * its positions (quadratic).
 */
export function addressRun(s: string): string | undefined {
  for (const run of s.split(/[\s<>"]+/)) {
    const at = run.indexOf('@', 1);
    if (at !== -1 && at <= run.length - 2) return run;
  }
  return undefined;
}

interface PersonMatch {
  matched: boolean;
  /** The display name as sent. */
  display_name: string;
  name?: string;
  email?: string;
  title?: string;
  vip?: boolean;
  /** The sender address is the matched person's own address. */
  same_address?: boolean;
}

/** What the directory says about one email: the `data` of the provider's answer. */
export interface DirectoryFacts {
  configured: boolean;
  sender: string;
  sender_domain: string;
  sender_internal: boolean;
  sender_partner: boolean;
  /** The sender address belongs to a known person. */
  sender_person: { name: string; title: string; vip: boolean } | null;
  recipient_vips: { name: string; email: string; title: string }[];
  display_name_matches_person: PersonMatch;
  internal_domains: string[];
  partner_domains: string[];
}

function firstHeader(email: Email, name: string): string | undefined {
  const v = email.headers.raw_headers?.[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Index of a directory for fast lookups; build once per directory version. */
export class DirectoryIndex {
  private readonly byAddress = new Map<string, Person>();
  private readonly byName = new Map<string, Person>();

  constructor(readonly dir: Directory) {
    for (const p of dir.people) {
      this.byAddress.set(p.email, p);
      for (const n of [p.name, ...p.aliases]) {
        const key = normalizeName(n);
        // a VIP wins over a namesake
        if (key && (!this.byName.has(key) || p.vip)) this.byName.set(key, p);
      }
    }
  }

  personByName(displayName: string): Person | undefined {
    const key = normalizeName(displayName);
    if (!key) return undefined;
    const direct = this.byName.get(key);
    if (direct) return direct;
    // a display name that is a person's address ("ceo@example.org" <x@evil>)
    const addr = addressRun(displayName)?.toLowerCase();
    return addr ? this.byAddress.get(addr) : undefined;
  }

  facts(email: Email): DirectoryFacts {
    const dir = this.dir;
    const internal = [
      ...new Set([...dir.internal_domains, ...dir.people.map((p) => domainOf(p.email))]),
    ];
    const sender = email.headers.sender.toLowerCase();
    const senderDomain = domainOf(sender);
    const senderPerson = this.byAddress.get(sender);
    const from = firstHeader(email, 'from');
    const displayName = from ? parseFromHeader(from).displayName : '';
    const match = displayName ? this.personByName(displayName) : undefined;
    const recipients = [...email.headers.recipients, ...(email.headers.cc ?? [])];
    const vips = new Map<string, { name: string; email: string; title: string }>();
    for (const r of recipients) {
      const p = this.byAddress.get(r.toLowerCase());
      if (p?.vip) vips.set(p.email, { name: p.name, email: p.email, title: p.title });
    }
    return {
      configured: dir.people.length > 0 || internal.length > 0 || dir.partner_domains.length > 0,
      sender,
      sender_domain: senderDomain,
      sender_internal: inDomains(senderDomain, internal),
      sender_partner: inDomains(senderDomain, dir.partner_domains),
      sender_person: senderPerson
        ? { name: senderPerson.name, title: senderPerson.title, vip: senderPerson.vip }
        : null,
      recipient_vips: [...vips.values()],
      display_name_matches_person: match
        ? {
            matched: true,
            display_name: displayName,
            name: match.name,
            email: match.email,
            title: match.title,
            vip: match.vip,
            same_address: match.email === sender,
          }
        : { matched: false, display_name: displayName },
      internal_domains: internal,
      partner_domains: dir.partner_domains,
    };
  }
}

import { z } from 'zod';

/**
 * A symbol is one technique an analyzer recognises, reported by name in `analyzer_details.symbols`.
 * Each declares, where it is defined, the log-odds it adds to the verdict, the group of symbols
 * that restate the same fact (they count together up to the group's cap) and a one-line reason.
 * The scorer uses the declared score unless an operator's weights file overrides it: no symbol
 * weighs 0 because a training set happened to lack it.
 */
export interface SymbolDef {
  /** Log-odds added when the symbol fires; negative is evidence of legitimate mail. */
  score: number;
  /** Group whose cap bounds this symbol together with the others restating its fact. */
  group?: GroupId;
  /** Why the technique tells phishing (or legitimate mail) on any mail stream. */
  reason: string;
}

export type SymbolDefs = Record<string, SymbolDef>;

/** Identity function that keeps the literal keys of a symbol table. */
export function defineSymbols<const T extends SymbolDefs>(defs: T): T {
  return defs;
}

/**
 * The zod schema of an analyzer's `weights` setting: one number per symbol, defaulting to its
 * declared score (an operator may change it in service.yaml; the scorer then uses that).
 */
export function weightsSchema<T extends SymbolDefs>(defs: T) {
  return z.object(weightsShape(defs));
}

/** The fields of weightsSchema, to spread into a larger weights object; `bounded`: within ±20. */
export function weightsShape<T extends SymbolDefs>(defs: T, bounded = true) {
  const shape = {} as { [K in keyof T]: z.ZodDefault<z.ZodNumber> };
  for (const k of Object.keys(defs) as (keyof T)[])
    shape[k] = (bounded ? z.number().min(-20).max(20) : z.number()).default(defs[k]!.score);
  return shape;
}

export interface GroupDef {
  /** Most the group's symbols add together (log-odds). */
  max: number;
  /** Least they add together: 0 for a group whose negative symbols only explain its positive ones. */
  min: number;
  /**
   * Evidence of legitimate mail from other groups (standing, what the deployment learnt) lowers
   * everything but this group's positive sum: a domain's reputation never excuses a request for
   * credentials, money or a call, a dangerous attachment or a listed link.
   */
  firm?: boolean | undefined;
  reason: string;
  /**
   * Groups whose evidence this group never excuses: when one of them counted anything, this group
   * counts nothing (the organisation's allow list yields to its block list, to a threat feed and
   * to a payload).
   */
  yields_to?: readonly string[];
}

/**
 * The groups of the built-in symbols. A group holds the symbols that restate one fact, seen by one
 * or several analyzers; a message gets at most `max` from it. A group whose explaining symbol comes
 * from a header the sender controls has `min: 0`: the explanation cancels what it accounts for and
 * never makes a message look legitimate by itself.
 */
export const GROUPS = {
  auth: {
    // below the scorer's bias (−3): failing authentication alone (a forwarded or relayed message)
    // is not phishing; with any other sign of it, it is
    max: 2.5,
    min: 0,
    reason:
      'sender authentication as the receiving organisation recorded it (SPF, DKIM, DMARC, ARC)',
  },
  reply_to: {
    max: 2.5,
    min: 0,
    reason: 'replies or bounces routed away from the sender (one fact, several analyzers)',
  },
  sender: {
    max: 3.5,
    min: 0,
    reason: 'who the From header claims to be versus the address it comes from',
  },
  sender_domain: {
    max: 2.5,
    min: 0,
    reason: 'a sending domain that looks throw-away, generated or high-abuse',
  },
  header_tricks: {
    max: 2.5,
    min: 0,
    reason: 'headers written to defeat filters or bait the recipient',
  },
  addressing: {
    max: 1.5,
    min: 0,
    reason:
      'how the message addresses the recipient: by e-mail address or a generic title, not a name',
  },
  pressure: {
    max: 3.5,
    min: 0,
    reason: 'urgency, threat, reward and unsolicited-offer language, in any language',
  },
  request: {
    firm: true,
    max: 3,
    min: 0,
    reason: 'the message asks for credentials or money, in any language',
  },
  brand: {
    max: 3.5,
    min: 0,
    reason: 'a brand named or imitated by a sender that is not the brand',
  },
  deceptive_links: {
    max: 4.5,
    min: 0,
    reason:
      'links that hide where they go (look-alikes, IP literals, text that shows another domain)',
  },
  link_hosting: {
    max: 2,
    min: 0,
    reason: 'links to hosting that phishing favours (shorteners, free hosting, high-abuse TLDs)',
  },
  structure: {
    max: 1,
    min: 0,
    reason:
      'how the message was built: by hand or by a script, not by a mail client or a list manager',
  },
  obfuscation: {
    max: 3,
    min: 0,
    reason: 'text disguised against keyword filters',
  },
  payload: {
    firm: true,
    max: 5,
    min: 0,
    reason: 'attachments and forms that carry the attack itself',
  },
  threat_intel: {
    firm: true,
    max: 6,
    min: 0,
    reason:
      'links, domains and attachments a phishing or malware feed lists (one listing, seen as URL, host, domain or hash)',
  },
  standing: {
    max: 0,
    min: -4,
    reason:
      'evidence an attacker cannot write: authenticated mail from a domain with standing, a known correspondent',
  },
  learned: {
    max: 2.5,
    min: -0.5,
    reason:
      "what this deployment's own learnt mail says of the message's words, links and sender (the classifier, bounded)",
  },
  org_block: {
    max: 10,
    min: 0,
    reason: "the organisation's own block list (issue 32): its decision outweighs any evidence",
  },
  org_allow: {
    max: 0,
    min: -8,
    reason:
      "the organisation's own allow list (issue 32): never counted with a block, a threat-feed listing or a payload",
    yields_to: ['org_block', 'threat_intel', 'payload'],
  },
} as const satisfies Record<string, GroupDef>;

type GroupId = keyof typeof GROUPS;

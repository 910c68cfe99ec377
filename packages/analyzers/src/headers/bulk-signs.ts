/**
 * Bulk-mail and scam techniques visible in the From and Subject headers. Pure string checks, no
 * lists of senders: each names a trick used to defeat filters or to pose as someone else.
 */
import { INSTITUTION_WORD } from '../shared/institutions.ts';

/**
 * A junk token appended to the subject or display name so that no two copies match ("…!.BVUM",
 * "Collectief .BOLFR", "- vKsJR5Dcnny", "ttqmk.feqvm.slsbs.yjgkv"). Returns the token found.
 */
export function junkSuffix(s: string): string | undefined {
  const t = s.trim();
  // ".ABCD" glued to a word, punctuation or space at the very end
  // (what /(?:[a-z!?.\s])\.+([A-Z]{3,12})$/ matches: a dot is one of the characters before the dot)
  const dotCaps = /[a-z!?.\s]\.([A-Z]{3,12})$/.exec(t);
  if (dotCaps) return `.${dotCaps[1]}`;
  // a final token mixing lower, upper case and digits ("vKsJR5Dcnny")
  const last = /(?:^|[\s#-])([A-Za-z0-9]{8,24})$/.exec(t)?.[1];
  if (last && /[a-z]/.test(last) && /[A-Z]/.test(last) && /[0-9]/.test(last)) {
    const switches = last.match(/[a-z][A-Z]|[A-Z][a-z][a-z]*[A-Z]/g)?.length ?? 0;
    if (switches >= 2) return last;
  }
  // a long final token of lower-case letters and digits drawn at random ("#oo2oyj6dku6kdhekfc84exnta"):
  // digits scattered among the letters, and letters past f (not a hexadecimal hash or id)
  const lowerToken = /(?:^|[\s#-])([a-z0-9]{16,40})$/.exec(t)?.[1];
  if (lowerToken && /[g-z]/.test(lowerToken)) {
    const flips = lowerToken.match(/[a-z][0-9]|[0-9][a-z]/g)?.length ?? 0;
    const digits = lowerToken.match(/[0-9]/g)?.length ?? 0;
    if (digits >= 3 && flips >= 5) return lowerToken;
  }
  // a chain of vowel-poor dotted groups ("ttqmk.feqvm.slsbs.yjgkv")
  const chain = /(?:^|\s)((?:[a-z]{4,6}\.){3,}[a-z]{4,6})$/.exec(t)?.[1];
  if (chain?.split('.').every((g) => (g.match(/[aeiou]/g)?.length ?? 0) <= 1)) return chain;
  return undefined;
}

/**
 * A display name that was mangled or stuffed: quotes or an address inside it, a dangling comma or
 * bracket at its end, runs of blanks or tabs.
 */
export function malformedDisplayName(dn: string): string | undefined {
  if (/["“”]/.test(dn)) return 'quotation marks inside the name';
  const lt = dn.indexOf('<'); // /<[^>]*>/.test(dn), without a retry at every `<`
  if (lt !== -1 && dn.indexOf('>', lt + 1) !== -1 && /,\s*$/.test(dn))
    return 'an address and a dangling comma';
  if (/[,([]\s*$/.test(dn)) return 'a dangling comma or bracket';
  if (/\t| {3,}/.test(dn)) return 'runs of blanks';
  if (/\(\d{1,3}\)\s*$/.test(dn)) return 'a message counter';
  if (/\d{7,}/.test(dn)) return 'a long number';
  return undefined;
}

/** Words cut up by spaces or dots to slip past keyword filters ("L etzte B enachrichtigung", "u..te"). */
export function brokenWords(s: string): boolean {
  // a reply prefix is a sender's to write: the rest is the subject as built
  if (
    underscoreJoined(s.replace(/^\s*(?:re|aw|antw|sv|rif|res|r|fwd?|wg|tr|rv)\s{0,3}:\s{0,3}/i, ''))
  )
    return true;
  const split = s.match(/(?:^|\s)[B-HJ-Z] [a-zäöüßéèàç]{3,}/g)?.length ?? 0;
  if (split >= 2) return true;
  const spelled =
    /(?:^|\s)(?:[A-Za-z] ){3,}[A-Za-z](?:\s|$)/.test(s) && /[a-z] [a-z] [a-z]/.test(s);
  if (spelled) return true;
  if (/(?:^|\s)[a-z]{1,12}\.\.[a-z]{2,}/.test(s)) return true;
  // one letter split off by a dot, twice or more ("S.eu e.spaço de a.rmazenamento")
  return (s.match(/(?:^|\s)\p{L}\.\p{Ll}{2,}/gu)?.length ?? 0) >= 2;
}

/**
 * Words joined by underscores instead of spaces ("_hurry_up_!_Rewards_have_arrived!_",
 * "Get_it_urgently_0.7495_BTC"), so that a filter's word tokenizer sees one token: no white space at
 * all and three or more underscore-joined words. A subject that is a file name is left alone.
 */
function underscoreJoined(s: string): boolean {
  if (s.length > 300 || /\s/.test(s) || /\.[A-Za-z0-9]{2,4}$/.test(s)) return false;
  let words = 0;
  for (const part of s.split('_')) if (/\p{L}{2,}/u.test(part)) words++;
  return words >= 3;
}

/** "Re:" / "Fwd:" on a message that answers nothing (no In-Reply-To, no References). */
export function fakeReply(subject: string, headerNames: string[]): boolean {
  // (what /^\s*(?:re|…)\s*(?:\[\d+\])?\s*:/i matches, without two \s* side by side to split a run)
  if (!/^\s*(?:re|aw|antw|sv|rif|res|r|fwd?|wg|tr|rv)\s*(?:\[\d+\]\s*)?:/i.test(subject))
    return false;
  return !headerNames.includes('in-reply-to') && !headerNames.includes('references');
}

const ROLE_LOCAL =
  /^(?:info|noreply|no-reply|donotreply|do-not-reply|news|newsletters?|contact|contato|support|service|services|customerservice|renew|hello|hi|team|mail|mailer|bounce|reports?|marketing|offers?|promo|promotions?|deals|notifications?|alerts?|admin|website|members|return|message|updates?|care|account|billing|sales)(?:[._-].*)?$/;

/** Letters NFKD does not take apart, as domain names write them ("Przykładowy" is przykladowy). */
const UNDECOMPOSED: Record<string, string> = {
  ł: 'l',
  ø: 'o',
  æ: 'ae',
  œ: 'oe',
  đ: 'd',
  ð: 'd',
  þ: 'th',
  ı: 'i',
  ß: 'ss',
};

function fold(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[łøæœđðþıß]/g, (c) => UNDECOMPOSED[c] ?? c);
}

/**
 * An organisation-like display name ("Endurance Auto Warranty") on a generic role address
 * (info@, noreply@, renew@ …), or on a generated mailbox (`generatedMailbox`), whose address shares
 * none of the name's words: a sender posing as an organisation it does not mail from. Person names
 * on personal addresses do not qualify.
 */
export function unrelatedOrgName(
  displayName: string,
  address: string,
  generatedMailbox = false,
): boolean {
  const [local = '', domain = ''] = fold(address).split('@');
  if (!generatedMailbox && !ROLE_LOCAL.test(local)) return false;
  const words = fold(displayName)
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length >= 4);
  if (words.length < 2) return false;
  const addr = `${local}.${domain}`.replace(/[^a-z0-9]/g, '');
  if (words.some((w) => addr.includes(w) || (w.length >= 6 && addr.includes(w.slice(0, 5)))))
    return false;
  return !shortenedName(displayName, domain);
}

/** German letters as domain names write them ("Köln" is koeln, "Straße" strasse). */
function transliterate(s: string): string {
  return s.replace(/[äöüÄÖÜß]/g, (c) => TRANSLITERATION[c] ?? c);
}
const TRANSLITERATION: Record<string, string> = {
  ä: 'ae',
  ö: 'oe',
  ü: 'ue',
  Ä: 'Ae',
  Ö: 'Oe',
  Ü: 'Ue',
  ß: 'ss',
};

/**
 * Whether a domain names an organisation the way organisations shorten their names in domains:
 * the initials of the name's words ("Deutsche Kreditbank" at dkb.de), a short word of the name as
 * a whole part of a label ("Banque Populaire du Lac" at bp-du-lac.fr), or a word with its umlaut
 * written out ("Sparkasse Köln" at ksk-koeln.de). A sender who can put one word of the name in
 * his domain passes already; initials or a short word cost him no less.
 */
function shortenedName(displayName: string, domain: string): boolean {
  const labels = domain.split('.').slice(0, -1);
  const parts = new Set(labels.flatMap((l) => l.split('-')));
  const flat = labels.join('');
  for (const folded of [fold(displayName), fold(transliterate(displayName))]) {
    const words = folded.split(/[^a-z0-9]+/).filter((w) => w && !NAME_FILLER.has(w));
    if (words.some((w) => w.length >= 3 && (parts.has(w) || (w.length >= 4 && flat.includes(w)))))
      return true;
    const initials = words.map((w) => w[0]).join('');
    if (initials.length >= 2 && labels.some((l) => l.startsWith(initials))) return true;
  }
  return false;
}

/** Words of an institution's display name that do not name it ("Online Banking", "of", "S/A"). */
const NAME_FILLER = new Set(
  'of the de do da del des du la le und and y e online banking service services team customer support alert alerts security sa ag plc inc ltd na'.split(
    ' ',
  ),
);

/**
 * A bank's or a parcel carrier's name as display name on a domain that is not theirs: the display
 * name says bank or courier (bank, banco, Sparkasse, credit union, 銀行, couriers, Paket, colis …, in
 * any case; not the singular "courier", a common newspaper name), and the sender's domain holds none of the name's other words nor its initials
 * ("Banco do Brasil" at bb.com.br is the bank's; "TF Bank" at true.co.za is not). Such senders
 * mail from their own domains; no list of the world's banks and carriers can be complete, the
 * word is enough. Returns the name, or undefined.
 */
export function institutionOffDomain(displayName: string, domain: string): string | undefined {
  const dn = displayName.slice(0, 200);
  if (!INSTITUTION_WORD.test(dn)) return undefined;
  const d = fold(domain);
  if (!d) return undefined;
  const words = fold(dn)
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w && !NAME_FILLER.has(w));
  const flat = d.replace(/[^a-z0-9]/g, '');
  const labels = d.split('.');
  const initials = words.map((w) => w[0]).join('');
  const related =
    words.some((w) => w.length >= 3 && !INSTITUTION_WORD.test(w) && flat.includes(w)) ||
    // the name is the institution word alone and the domain is that word ("Kurier" at kurier.at)
    (labels.length >= 2 && words.some((w) => labels.includes(w))) ||
    words.some((w) => w.length === 2 && labels.includes(w)) ||
    (initials.length >= 2 && labels.some((l) => l.startsWith(initials)));
  return related ? undefined : dn.trim();
}

/** How many ASCII lower-case letters, capitals, digits and other characters `s` has. */
function asciiClasses(s: string): { lower: number; upper: number; digits: number; other: number } {
  const n = { lower: 0, upper: 0, digits: 0, other: 0 };
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 97 && c <= 122) n.lower++;
    else if (c >= 65 && c <= 90) n.upper++;
    else if (c >= 48 && c <= 57) n.digits++;
    else n.other++;
  }
  return n;
}

/**
 * A mailbox name of letters in a random mix of cases ("SNYTVKOqu", "uJrkoOT", "elXmWLz"): people
 * and organisations write local parts in lower case, in capitals, or as capitalised words
 * ("JohnSmith"); a generator that draws each letter's case at random writes none of those.
 */
export function mixedCaseLocalPart(local: string): boolean {
  if (local.length < 6 || local.length > 40) return false;
  const { lower, upper, other } = asciiClasses(local);
  if (other > 0 || lower === 0 || upper === 0) return false;
  // capitalised words, optionally a leading lower-case word and trailing digits: a person's style
  return !/^[a-z]*(?:[A-Z][a-z]+)*[0-9]*$/.test(local);
}

/** A sender mailbox name that looks generated ("new_offre_1_89227", "migo0003-----r172"). */
export function generatedLocalPart(address: string): boolean {
  if (mixedCaseLocalPart(address.split('@')[0] ?? '')) return true;
  const local = fold(address.split('@')[0] ?? '');
  if (/-{3,}|_{3,}|\d{12}/.test(local)) return true;
  return numberedLocalPart(local);
}

const isDigit = (c: number) => c >= 48 && c <= 57;
const isSep = (c: number) => c === 46 || c === 95 || c === 45; // . _ -
const isWord = (c: number) =>
  isDigit(c) || (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;

/** Whether every character of s[from, to) is a \w character. */
function allWord(s: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (!isWord(s.charCodeAt(i))) return false;
  return true;
}

/**
 * What `/^[a-z]+[._-]\w*[._-]?\d+[._-]\d{4,}$/.test(s)` answers, in one pass: letters, a separator,
 * then X, a separator and four or more digits to the end, where X is word characters ending in a
 * digit, or word characters, a separator and digits. The regex tried every way to split a run of
 * digits between `\w*` and `\d+` (cubic).
 */
export function numberedLocalPart(s: string): boolean {
  // the final digits (\d{4,}) and the separator before them
  let tail = s.length;
  while (tail > 0 && isDigit(s.charCodeAt(tail - 1))) tail--;
  if (s.length - tail < 4 || tail === 0 || !isSep(s.charCodeAt(tail - 1))) return false;
  const end = tail - 1; // X is s[x, end)
  // the leading letters ([a-z]+) and the separator after them
  let x = 0;
  while (x < end && s.charCodeAt(x) >= 97 && s.charCodeAt(x) <= 122) x++;
  if (x === 0 || x >= end || !isSep(s.charCodeAt(x))) return false;
  x++;
  if (x >= end || !isDigit(s.charCodeAt(end - 1))) return false;
  // X = \w*\d: word characters ending in a digit
  if (allWord(s, x, end)) return true;
  // X = \w*[._-]\d+: word characters, a separator, the digits X ends with
  let digits = end;
  while (digits > x && isDigit(s.charCodeAt(digits - 1))) digits--;
  return digits > x && isSep(s.charCodeAt(digits - 1)) && allWord(s, x, digits - 1);
}

/** The subject shows an e-mail address other than the sender's (bulk mail greeting its target). */
export function addressInSubject(subject: string, from: string): boolean {
  const sender = from.toLowerCase();
  return addressesIn(subject.toLowerCase()).some((a) => a !== sender);
}

const isLocalChar = (c: number) =>
  (c >= 97 && c <= 122) || isDigit(c) || c === 46 || c === 95 || c === 37 || c === 43 || c === 45;
const isLabelChar = (c: number) => (c >= 97 && c <= 122) || isDigit(c) || c === 45;

/**
 * What `s.match(/[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\/g)` answers: each `@` with local-part
 * characters before it (from the end of the previous match on) and a label after it, with the
 * dotted labels that follow. A scan from each `@`; the regex read a long run of local-part
 * characters again from each of its positions (quadratic).
 */
export function addressesIn(s: string): string[] {
  const out: string[] = [];
  let last = 0; // where the previous match ended
  for (let at = s.indexOf('@'); at !== -1; at = s.indexOf('@', at + 1)) {
    let start = at;
    while (start > last && isLocalChar(s.charCodeAt(start - 1))) start--;
    let end = at + 1;
    while (end < s.length && isLabelChar(s.charCodeAt(end))) end++;
    if (start === at || end === at + 1) continue;
    while (end + 1 < s.length && s.charCodeAt(end) === 46 && isLabelChar(s.charCodeAt(end + 1))) {
      end += 2;
      while (end < s.length && isLabelChar(s.charCodeAt(end))) end++;
    }
    out.push(s.slice(start, end));
    last = end;
  }
  return out;
}

/**
 * A host label below the registrable domain that looks generated ("gnrpm.8inkdjmmst.edu.info",
 * "qfskkp.domsmooth81.com"): letters and digits interleaved, or a long label almost without vowels.
 */
export function generatedSubdomain(host: string, orgDomain: string): string | undefined {
  if (!orgDomain || !host.endsWith(orgDomain) || host === orgDomain) return undefined;
  const labels = host.slice(0, -orgDomain.length - 1).split('.');
  return labels.find((l) => {
    if (l.length < 5) return false;
    if (/^(?:mail|smtp|mx|out|bounce|em|mta|send|relay|host|srv|server|web|node)/.test(l))
      return false;
    if (/[a-z]{2,}[0-9]+[a-z]{2,}/.test(l)) return true;
    const letters = l.replace(/[^a-z]/g, '');
    const vowels = letters.replace(/[^aeiouy]/g, '').length;
    if (letters.length >= 6 && vowels === 0) return true;
    return /[0-9]/.test(l) && letters.length >= 6 && vowels / letters.length < 0.2;
  });
}

/**
 * Whether a word hides a letter behind a look-alike: a digit among letters ("paypa1", "amaz0n"), a
 * lower-case l among capitals ("lRS"), or a capital I among lower-case letters ("PayPaI"). Ordinary
 * words and abbreviations write none of these.
 */
export function disguisedLetters(word: string): boolean {
  const { digits, upper, lower } = asciiClasses(word);
  if (upper + lower < 2) return false;
  if (digits > 0 && /[a-z][01][a-z]|[a-z][01]$|^[01][a-z]/i.test(word)) return true;
  // "lRS": lower-case l among capitals; "PayPaI": a capital I after lower-case letters
  if (lower === 1 && upper >= 2 && word.includes('l')) return true;
  return /[a-z]I/.test(word);
}

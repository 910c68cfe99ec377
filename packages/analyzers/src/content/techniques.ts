/**
 * The content techniques, one function each: `(ctx) => Finding[]` over one message's
 * ContentContext. contentFindings (analyzer.ts) runs them in the order of CONTENT_TECHNIQUES.
 */
import type { Email } from '@trawl/contracts';
import { carriesElsewhere, platformOwnMail } from '../shared/brand-mail.ts';
import { institutionSender } from '../shared/institutions.ts';
import { type LanguageHits, viewBrands, viewHits } from '../shared/lexicon-hits.ts';
import { type Brand, brandOwning, hostInList, type Lexicons } from '../shared/lexicons.ts';
import { reportOf, reportProse } from '../shared/machine-mail.ts';
import { countMixedScriptWords, countStyledLetters, hasNonAscii } from '../shared/normalize.ts';
import { type Finding, finding, one, oneOf } from '../shared/score.ts';
import { bulkEvidence, dkimRecorded, ownDomainVouched } from '../shared/signed-headers.ts';
import { htmlMatches, type MailView, orgDomain, viewOf } from '../shared/view.ts';
import type { ContentSettings } from './settings.ts';
import {
  genericGreeting,
  greetingAddress,
  insertedNoise,
  isTextAlternative,
  namesMoneyAmount,
  phoneNumberIn,
  sentimentScore,
  visibleBelow,
  zeroWidthIn,
} from './signals.ts';

/** What every content technique reads, built once per message. */
interface ContentContext {
  email: Email;
  v: MailView;
  settings: ContentSettings;
  w: ContentSettings['weights'];
  lex: Lexicons;
  /** Lexicon phrases in the subject and the text, of the languages that apply. */
  hits: LanguageHits;
  /** Sentiment of the hits, −1 … 1. */
  sentiment: number;
}

export type ContentTechnique = (ctx: ContentContext) => Finding[];

export function contentContext(email: Email, settings: ContentSettings, lex: Lexicons) {
  const v = viewOf(email);
  const hits = viewHits(v, lex, settings.languages);
  return {
    email,
    v,
    settings,
    w: settings.weights,
    lex,
    hits,
    sentiment: sentimentScore(hits),
  } satisfies ContentContext;
}

const NONE: Finding[] = [];

type ScoredCategory = 'urgency' | 'threat' | 'reward' | 'credential' | 'payment' | 'spam';
const SCORED: { cat: ScoredCategory; type: string; label: string }[] = [
  { cat: 'urgency', type: 'urgency_language', label: 'urgency' },
  { cat: 'threat', type: 'threat_language', label: 'threat' },
  { cat: 'reward', type: 'reward_language', label: 'reward' },
  { cat: 'credential', type: 'credential_request', label: 'credential request' },
  { cat: 'payment', type: 'payment_request', label: 'payment' },
  { cat: 'spam', type: 'spam_language', label: 'unsolicited-offer' },
];

/** The phrases of a category in the subject and (others) in the body, and the hits they count for. */
function categoryHits({ hits, w }: ContentContext, cat: ScoredCategory) {
  const sub = hits.subject[cat] ?? [];
  const body = (hits.body[cat] ?? []).filter((p) => !sub.includes(p));
  const n = Math.min(sub.length * w.subject_factor + body.length, w[cat].max_hits);
  return { sub, body, n };
}

// urgency, threat, reward, credential, payment and unsolicited-offer language
export const languageFindings: ContentTechnique = (ctx) => {
  const out: Finding[] = [];
  for (const { cat, type, label } of SCORED) {
    const { sub, body, n } = categoryHits(ctx, cat);
    if (n <= 0) continue;
    const phrases = [...sub, ...body]
      .slice(0, 4)
      .map((p) => `“${p}”`)
      .join(', ');
    out.push({
      type,
      value: `${label} language: ${phrases}`,
      symbol: `${cat}_${Math.min(n, 3)}`,
      weight: n * ctx.w[cat].per_hit,
    });
    if (sub.length)
      out.push({
        type,
        value: `${label} language in the subject`,
        symbol: `subject_${cat}`,
        weight: 0,
      });
  }
  return out;
};

// a report recognised by its structure: what it explains (its delivery wording) is in the evidence
export const machineReportFindings: ContentTechnique = ({ v, lex, w }) => {
  const report = reportOf(v, lex);
  if (!report) return NONE;
  return oneOf(
    w,
    'machine_report',
    'machine_mail',
    `${REPORT_NAMES[report.kind]} by its structure (${report.by}): its delivery wording is its own`,
  );
};

const REPORT_NAMES = {
  delivery_status: 'a delivery status notification (RFC 3464)',
  disposition: 'a read receipt (RFC 8098)',
  tls_report: 'an SMTP TLS report (RFC 8460)',
  dmarc_report: 'a DMARC aggregate report (RFC 7489)',
} as const;

// three or more kinds of pressure language together
export const comboFindings: ContentTechnique = (ctx) => {
  let categories = 0;
  for (const { cat } of SCORED) if (categoryHits(ctx, cat).n > 0) categories++;
  if (categories < 3) return NONE;
  return oneOf(
    ctx.w,
    'combo_bonus',
    'urgency_language',
    `${categories} kinds of pressure language together`,
  );
};

// an alarming tone
export const sentimentFindings: ContentTechnique = ({ sentiment, settings, w }) => {
  if (sentiment > -settings.sentiment_threshold) return NONE;
  return oneOf(
    w,
    'negative_sentiment',
    'negative_sentiment',
    `alarming tone (sentiment ${sentiment.toFixed(2)})`,
  );
};

/** Whether a domain is one of a brand's domains or below one. */
function brandOwns(brand: Brand, d: string): boolean {
  return brand.domains.some((bd) => d === bd || d.endsWith(`.${bd}`));
}

// brands named in the text versus the sender's domain
export const brandFindings: ContentTechnique = (ctx) => {
  const { v, lex, hits, settings: s, w } = ctx;
  const { subject: subjBrands, displayName: dnBrands, body: bodyBrands } = viewBrands(v, lex);
  const fromDomain = v.from.domain;
  const pressureCount = (['credential', 'payment', 'threat'] as const).reduce(
    (n, c) => n + (hits.subject[c]?.length ?? 0) + (hits.body[c]?.length ?? 0),
    0,
  );
  // a number to call about a charge is the request of a call-back lure
  const pressure = pressureCount >= 2 || callbackNumber(ctx) !== undefined;
  // the links: in HTML what can be clicked (a text URL there may only show a name), in plain
  // text the URLs written out
  const linkDomains = new Set(
    v.urls
      .filter((u) =>
        v.has_html
          ? u.source === 'href' || u.source === 'form' || u.source === 'area'
          : u.source === 'text',
      )
      .map((u) => u.domain)
      .filter(Boolean),
  );
  for (const id of new Set([...subjBrands.keys(), ...dnBrands.keys(), ...bodyBrands.keys()])) {
    if (s.protected_brands.length && !s.protected_brands.includes(id)) continue;
    const brand = lex.brands.find((b) => b.id === id);
    if (!brand) continue;
    const inName = dnBrands.has(id);
    const conf = subjBrands.has(id) || inName ? 0.9 : (bodyBrands.get(id) ?? 0) >= 2 ? 0.7 : 0.5;
    if (conf < s.ner_confidence_threshold) continue;
    if (brandOwns(brand, fromDomain)) {
      // the brand's own domain in From, asking for credentials or money, and not one link to the
      // brand: a spoofed sender (genuine brand mail links to the brand; a verified DMARC pass for
      // the domain, which headers credits, is what makes such a From believable)
      const request = (['credential', 'payment'] as const).some(
        (c) => (hits.subject[c]?.length ?? 0) + (hits.body[c]?.length ?? 0) > 0,
      );
      // a link to the brand is anyone's to write: it answers for the brand only when the brand's
      // domain signed or no DKIM result was recorded (ownDomainVouched); otherwise what the
      // sender cannot avoid is the link that leaves for a domain no brand operates (its lure)
      const offBrand = [...linkDomains].filter((d) => !brandOwns(brand, d));
      const lure =
        offBrand.length === linkDomains.size ||
        (!ownDomainVouched(v.auth, v.from.org_domain) &&
          offBrand.some((d) => !lex.freeMail.has(d) && !brandOwning(lex.brands, d)));
      if (request && offBrand.length > 0 && lure && !(v.auth.dmarc === 'pass' && v.auth.verified))
        return oneOf(
          w,
          'brand_sender_offsite_links',
          'brand_impersonation',
          `From is ${fromDomain} (${id}) but links leave ${id}: ${offBrand.slice(0, 3).join(', ')}`,
        );
      continue;
    }
    const linksToBrand = [...linkDomains].some((d) => brandOwns(brand, d));
    if (pressure && !linksToBrand)
      return one(
        'brand_impersonation',
        `mentions ${id} with a request, sent from ${fromDomain || 'an unknown domain'}`,
        'brand_impersonation',
        w.brand_impersonation * conf,
      );
    if (subjBrands.has(id) && !linksToBrand)
      return oneOf(
        w,
        'brand_mention',
        'brand_impersonation',
        `${id} named in the subject, sent from ${fromDomain || 'an unknown domain'}`,
      );
  }
  return NONE;
};

// text obfuscation against keyword filters
export const obfuscationFindings: ContentTechnique = ({ v, w }) => {
  // styled letters and mixed-script words need characters outside ASCII; most texts have none
  const raw = `${v.subject}\n${v.text}`;
  const plain = !hasNonAscii(v.subject) && !hasNonAscii(v.text);
  const zw = zeroWidthIn(v.subject, v.html || v.text);
  const styled = plain ? 0 : countStyledLetters(raw);
  const mixed = plain ? 0 : countMixedScriptWords(raw);
  if (zw < 5 && styled < 4 && mixed < 2) return NONE;
  return oneOf(
    w,
    'text_obfuscation',
    'text_obfuscation',
    `obfuscated text (${zw} invisible characters, ${styled} styled letters, ${mixed} mixed-script words)`,
  );
};

// one random token stuffed into the words again and again ("dow9R4ZET0AYQnlo9R4ZET0AYQad")
export const insertedNoiseFindings: ContentTechnique = ({ v, w }) => {
  const noise = insertedNoise(v.text.slice(0, 20_000));
  if (!noise) return NONE;
  return oneOf(
    w,
    'inserted_noise',
    'text_obfuscation',
    `the same junk token ${noise.slice(0, 20)} is stuffed into the words`,
  );
};

// text pushed far off screen by CSS (hidden filler or hidden lure): an offset, or a spacer tens
// of thousands of pixels (or a hundred screens) high; no message is laid out that far
const OFF_SCREEN =
  /(?:margin-(?:top|left)|text-indent|left|top|height|min-height)\s*:\s*-?(?:\d{5,}px|\d{4,}vh)/i;

export const hiddenTextFindings: ContentTechnique = ({ v, w }) => {
  if (!htmlMatches(v, OFF_SCREEN)) return NONE;
  return oneOf(
    w,
    'hidden_text',
    'suspicious_content',
    'HTML hides content by moving it tens of thousands of pixels off screen',
  );
};

// money or a discount in the subject ("$300 off", "1.3426 BTC", "20% für dich")
export const subjectMoneyFindings: ContentTechnique = ({ v, w }) => {
  if (!/[$€£]\s?\d|\d\s?(?:[$€£]|usd\b|eur\b|btc\b|eth\b|usdt\b)|\d\s?%/i.test(v.subject))
    return NONE;
  return oneOf(w, 'subject_money', 'reward_language', 'money or a discount named in the subject');
};

/**
 * HTML with no plain-text alternative. Every mainstream mail client (Outlook, Gmail, Apple Mail,
 * Thunderbird) and bulk-mail tool writes multipart/alternative; HTML alone comes from hand-rolled
 * scripts (SpamAssassin's MIME_HTML_ONLY). Mail from a list manager or a newsletter tool (List-Id,
 * List-Unsubscribe) is left out: some of those send HTML alone. The parser makes the text from the
 * HTML when the message has none, so "the text is the HTML's text" is how it shows here.
 */
export const htmlOnlyFindings: ContentTechnique = ({ email, v, w }) => {
  if (!v.has_html || v.html_text.trim() === '') return NONE;
  const plain = email.body_text ?? '';
  // the view's HTML text is bounded: the parser's copy starts with it; a text part that says
  // something else (a report's fields, filler) is no alternative
  if (!plain.startsWith(v.html_text) && isTextAlternative(plain, v.html_text)) return NONE;
  // only a list or bulk header that a domain authenticating the message vouches for
  if (bulkEvidence(email, v, v.auth)) return NONE;
  return oneOf(
    w,
    'html_only',
    'suspicious_content',
    'HTML without a plain-text alternative, not from a list or newsletter tool',
  );
};

// image-only lure: an HTML body whose visible text is almost nothing but which links out (a link
// or an image map's area)
export const imageOnlyFindings: ContentTechnique = ({ email, v, w }) => {
  if (
    !v.has_html ||
    (email.attachments?.length ?? 0) !== 0 ||
    !v.urls.some((u) => u.is_image || u.source === 'src') ||
    !v.urls.some(
      (u) =>
        (u.source === 'href' || u.source === 'area') &&
        (u.scheme === 'http' || u.scheme === 'https'),
    ) ||
    !visibleBelow(v.html_text, reportProse(email.body_text ?? ''), 120)
  )
    return NONE;
  return oneOf(
    w,
    'image_only',
    'suspicious_content',
    'message is an image with a link and almost no text',
  );
};

// the recipient greeted by an e-mail address, or by a title instead of a name
export const greetingFindings: ContentTechnique = ({ v, lex, w }) => {
  // the plain part first, then the HTML's text (some bulk tools put HTML source in the plain part)
  const address = greetingAddress(v.text) ?? greetingAddress(v.html_text);
  if (address)
    return oneOf(
      w,
      'greeting_address',
      'suspicious_content',
      `greets the recipient by an e-mail address (${address.slice(0, 80)})`,
    );
  const generic = genericGreeting(v.text) ?? genericGreeting(v.html_text);
  // a provider greets its customers from its own domain, never from someone's free-mail mailbox
  // (a person writing from one greets "Sir or Madam", not "Customer")
  if (generic && lex.freeMail.has(v.from.org_domain) && !/\bsir\b/i.test(generic))
    return oneOf(
      w,
      'customer_greeting_free_mail',
      'suspicious_content',
      `a provider’s greeting (“${generic.slice(0, 60)}”) from a free-mail mailbox`,
    );
  if (generic)
    return oneOf(
      w,
      'generic_greeting',
      'suspicious_content',
      `a generic greeting (“${generic.slice(0, 60)}”)`,
    );
  return NONE;
};

/**
 * A call-back lure (telephone-oriented attack delivery): a receipt, renewal or order for a sum of
 * money with a telephone number to call about it, and no link to the sender's own domain. The
 * number is the attack: whoever calls to dispute the charge is talked into remote access or a
 * payment. Genuine receipts come from the seller's domain and link to it; this one gives nowhere
 * to go but the phone.
 */
export const callbackFindings: ContentTechnique = (ctx) => {
  const phone = callbackNumber(ctx);
  if (!phone) return NONE;
  return oneOf(
    ctx.w,
    'callback_lure',
    'payment_request',
    `a charge or order with a number to call (${phone}) and no link to ${ctx.v.from.org_domain || 'the sender'}`,
  );
};

const callbackMemo = new WeakMap<MailView, string | null>();

/** The number a call-back lure gives (see callbackFindings), or undefined; once per view. */
function callbackNumber({ v, hits, lex }: ContentContext): string | undefined {
  const known = callbackMemo.get(v);
  if (known !== undefined) return known ?? undefined;
  const found = findCallbackNumber(v, hits, lex);
  callbackMemo.set(v, found ?? null);
  return found;
}

function findCallbackNumber(v: MailView, hits: LanguageHits, lex: Lexicons): string | undefined {
  // a statement that money was or will be taken (not merely payment words: "credit card" and
  // "wire transfer" are everyday business words)
  const charge = (hits.subject.charge?.length ?? 0) + (hits.body.charge?.length ?? 0);
  if (charge === 0) return undefined;
  const text = v.text || v.html_text;
  if (!namesMoneyAmount(text) && !namesMoneyAmount(v.subject)) return undefined;
  const phone = phoneNumberIn(text) ?? (v.text ? phoneNumberIn(v.html_text) : undefined);
  if (!phone) return undefined;
  const own = v.from.org_domain;
  if (ownLinkVouched(v, own, lex) && followedLinks(v).some((u) => u.domain === own))
    return undefined;
  return phone.trim();
}

/** Whether a link to the sender's own domain speaks for it (never a free-mail domain's site). */
function ownLinkVouched(v: MailView, own: string, lex: Lexicons): boolean {
  return !lex.freeMail.has(own) && ownDomainVouched(v.auth, own);
}

/**
 * An organisation's mail whose every clickable link leaves the organisation and hides where it
 * goes. Genuine mail of an organisation links to its own site (or to one the signing domain
 * owns); a link the reader can judge shows its domain in its text (a pasted URL, "see
 * example.org"). What is left, "click here" to someone else's domain, is how lures and spam from
 * throw-away or borrowed senders link. Free-mail senders are people (their links are theirs to
 * share), an authenticated list or bulk sender speaks for its list, and machine reports link
 * nowhere but their reporter: none of them counts.
 */
export const hiddenOffsiteFindings: ContentTechnique = ({ email, v, lex, w }) => {
  const own = v.from.org_domain;
  if (!own || !v.has_html || lex.freeMail.has(own) || reportOf(v, lex)) return NONE;
  const links = followedLinks(v).filter(
    (u) => (u.scheme === 'http' || u.scheme === 'https') && !u.private_ip,
  );
  if (links.length === 0) return NONE;
  const signers = new Set(v.auth.dkim_pass_domains.map((d) => orgDomain(d)));
  // a brand's mail links to any of the brand's domains (paypal.de's to paypal.com)
  const brand = brandOwning(lex.brands, v.from.domain);
  // the sender's account at a mail service names it in the host ("shop.us5.list-manage.com")
  const name = own.slice(0, own.indexOf('.'));
  // a link to the sender's own site is one the sender could write whoever it is: it counts when
  // the domain signed (ownLinkVouched)
  const ownCounts = ownLinkVouched(v, own, lex);
  const elsewhere = new Set<string>();
  for (const u of links) {
    const to = u.domain || u.host;
    if (signers.has(to)) return NONE;
    if (ownCounts && (to === own || (brand && brandOwns(brand, to)))) return NONE;
    if (name.length >= 4 && accountHost(u.host, to, name)) return NONE;
    // a click-tracking link that carries the sender's own address ("…awstrack.me/L0/https:%2F%2F…")
    if (ownCounts && carriesDomain(u.url, own)) return NONE;
    if (to === own || (brand && brandOwns(brand, to))) continue;
    // a link that shows its own domain is one the reader can judge
    if (u.anchor_domain && orgDomain(u.anchor_domain) === to) return NONE;
    elsewhere.add(to);
  }
  if (elsewhere.size === 0 || bulkEvidence(email, v, v.auth)) return NONE;
  return oneOf(
    w,
    'hidden_offsite_links',
    'suspicious_url',
    `every link leaves ${own} for ${[...elsewhere].slice(0, 3).join(', ')} without showing where`,
  );
};

/** Link text (or a URL) of an unsubscribe link, in the lexicons' languages. */
const UNSUBSCRIBE =
  /unsubscri|abbestell|abmelden|austragen|d[eé]sinscri|desabonn|descadastr|darse de baja|cancelar (?:la )?(?:suscri|inscri)|uitschrijven|afmelden|opt[ -]?out/i;

/** The registrable domain of a `mailto:` link's address ('' when it has none). */
function mailtoDomain(url: string): string {
  const at = url.indexOf('@');
  if (at === -1) return '';
  return orgDomain(
    url
      .slice(at + 1, at + 256)
      .split(/[?>,;\s]/)[0]!
      .toLowerCase(),
  );
}

/**
 * A newsletter whose unsubscribe link belongs to someone else. Whoever sends bulk mail takes its
 * own unsubscribes: the link goes to its own domain, to a domain that signed the message (its
 * mail service), to its account at a mail service (`shop.us5.list-manage.com`), or through a
 * tracker that carries its address. One that goes to an unrelated domain that did not sign is
 * how a copy of another organisation's newsletter (sent from a throw-away domain to borrow its
 * look) and spam relayed for someone else's list show. Not for free-mail senders (people forward
 * newsletters), authenticated lists or bulk senders, or machine reports.
 */
export const foreignNewsletterFindings: ContentTechnique = ({ email, v, lex, w }) => {
  const own = v.from.org_domain;
  if (!own || !v.has_html || lex.freeMail.has(own) || v.report) return NONE;
  // "did not sign" is known only where the receiving hop checks signatures: absent evidence is
  // never evidence
  if (!dkimRecorded(v.auth)) return NONE;
  const signers = new Set(v.auth.dkim_pass_domains.map((d) => orgDomain(d)));
  if (signers.has(own)) return NONE;
  const name = own.slice(0, own.indexOf('.'));
  const links = followedLinks(v);
  const unsub = links.find(
    (u) =>
      (u.scheme === 'http' || u.scheme === 'https' || u.scheme === 'mailto') &&
      UNSUBSCRIBE.test(u.anchor_text.slice(0, 200)),
  );
  if (!unsub) return NONE;
  const mailto = unsub.scheme === 'mailto';
  const other = mailto ? mailtoDomain(unsub.url) : unsub.domain;
  if (!other || other === own || signers.has(other) || lex.freeMail.has(other)) return NONE;
  if ((name.length >= 4 && accountHost(unsub.host, other, name)) || carriesDomain(unsub.url, own))
    return NONE;
  if (bulkEvidence(email, v, v.auth)) return NONE;
  return oneOf(
    w,
    'foreign_newsletter',
    'suspicious_content',
    `its unsubscribe ${mailto ? 'address' : 'link'} is at ${other}, not at ${own}, which sent it unsigned`,
  );
};

/** Whether the path or query of `url` carries a URL or host of `domain` (`%2F` read as `/`). */
function carriesDomain(url: string, domain: string): boolean {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  if (start === -1) return false;
  const rest = url
    .slice(start, start + 4096)
    .toLowerCase()
    .replace(/%2f/g, '/');
  return rest.includes(`//${domain}`) || rest.includes(`.${domain}/`);
}

/** Whether a label of `host` below its registrable domain `domain` is `name`. */
function accountHost(host: string, domain: string, name: string): boolean {
  const below = host.length - domain.length - 1;
  if (below <= 0) return false;
  for (const label of host.slice(0, below).split('.')) if (label === name) return true;
  return false;
}

/** The domains of what can be followed: in HTML what can be clicked, in plain text the URLs. */
function followedLinks(v: MailView) {
  return v.urls.filter((u) =>
    v.has_html
      ? u.source === 'href' || u.source === 'form' || u.source === 'area'
      : u.source === 'text',
  );
}

/**
 * A bank or a carrier that no brand list names, in its own From, asking for credentials or money,
 * with no link to its own domain: the 2004 pattern of a spoofed `service@sovereignbank.com` whose
 * links go to an IP address or a look-alike, for the banks and carriers no list can hold. Genuine
 * mail of such a sender links to its own site; a DMARC pass that the trusted hop verified (the
 * domain really sent it) clears it.
 */
export const institutionOffsiteFindings: ContentTechnique = ({ v, lex, hits, w }) => {
  const own = v.from.org_domain;
  if (!own || lex.freeMail.has(own)) return NONE;
  if (brandOwning(lex.brands, v.from.domain)) return NONE; // brandFindings' case
  if (!institutionSender(v.from.display_name, own)) return NONE;
  const asks = (['credential', 'payment'] as const).some(
    (c) => (hits.subject[c]?.length ?? 0) + (hits.body[c]?.length ?? 0) > 0,
  );
  if (!asks) return NONE;
  const links = [...new Set(followedLinks(v).map((u) => u.domain || u.host))].filter(Boolean);
  // a link to its own domain is anyone's to write: it counts when the domain signed
  const away = links.filter((d) => d !== own);
  if (away.length === 0 || (links.includes(own) && ownLinkVouched(v, own, lex))) return NONE;
  if (v.auth.dmarc === 'pass' && v.auth.verified) return NONE;
  return oneOf(
    w,
    'institution_sender_offsite_links',
    'brand_impersonation',
    `From ${own} (a bank's or carrier's name) asks for credentials or money, but its links leave ${own}: ${away.slice(0, 3).join(', ')}`,
  );
};

// a brand's own mail: From the brand's domain, every link, form and reply address to that brand
export const brandOwnLinksFindings: ContentTechnique = ({ email, v, lex, hits, w }) => {
  const from = v.from.domain;
  if (!from || lex.freeMail.has(v.from.org_domain) || (email.attachments?.length ?? 0) > 0)
    return NONE;
  const brand = brandOwning(lex.brands, from);
  if (!brand) return NONE;
  // a platform that sends for anyone carries what its users wrote: its links prove nothing of a
  // request, and only its own account mail has its alarm explained (shared/brand-mail.ts)
  const platform = brand.sends_for_anyone;
  if (platform && !platformOwnMail(v, brand)) return NONE;
  // every link to the brand's own pages: none an open redirect carrying another address, none on
  // a host where anyone can publish
  const links = followedLinks(v);
  const owns = (d: string) => brandOwns(brand, d);
  if (
    links.length === 0 ||
    !links.every(
      (u) =>
        u.domain !== '' &&
        owns(u.domain) &&
        !carriesElsewhere(u.url, owns) &&
        !hostInList(lex.freeHosting, u.host, u.domain),
    )
  )
    return NONE;
  // a number to call is an answer that does not go through the brand (call-back lures)
  if (phoneNumberIn(v.text || v.html_text)) return NONE;
  if (!v.reply_to.every((r) => r.domain !== '' && brandOwns(brand, r.domain))) return NONE;
  const count = (cats: readonly ScoredCategory[]) =>
    cats.reduce((n, c) => n + (hits.subject[c]?.length ?? 0) + (hits.body[c]?.length ?? 0), 0);
  const out: Finding[] = [];
  if (!platform && count(['credential', 'payment']) > 0)
    out.push(
      finding(
        'brand_own_links',
        `From ${from} (${brand.id}) and every link goes to ${brand.id}: its requests can only be answered there`,
        'brand_links_explain_request',
        w.brand_links_explain_request,
      ),
    );
  if (count(['urgency', 'threat', 'reward', 'spam']) > 0)
    out.push(
      finding(
        'brand_own_links',
        `From ${from} (${brand.id}) and every link goes to ${brand.id}: its alerts are the brand's own`,
        'brand_links_explain_alert',
        w.brand_links_explain_alert,
      ),
    );
  return out;
};

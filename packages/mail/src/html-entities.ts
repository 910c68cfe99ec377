const LATIN1 =
  'nbsp iexcl cent pound curren yen brvbar sect uml copy ordf laquo not shy reg macr deg plusmn sup2 sup3 acute micro para middot cedil sup1 ordm raquo frac14 frac12 frac34 iquest Agrave Aacute Acirc Atilde Auml Aring AElig Ccedil Egrave Eacute Ecirc Euml Igrave Iacute Icirc Iuml ETH Ntilde Ograve Oacute Ocirc Otilde Ouml times Oslash Ugrave Uacute Ucirc Uuml Yacute THORN szlig agrave aacute acirc atilde auml aring aelig ccedil egrave eacute ecirc euml igrave iacute icirc iuml eth ntilde ograve oacute ocirc otilde ouml divide oslash ugrave uacute ucirc uuml yacute thorn yuml';

const NAMED = new Map<string, string>([
  ['amp', '&'],
  ['lt', '<'],
  ['gt', '>'],
  ['quot', '"'],
  ['apos', "'"],
  ['hellip', '\u2026'],
  ['mdash', '\u2014'],
  ['ndash', '\u2013'],
  ['lsquo', '\u2018'],
  ['rsquo', '\u2019'],
  ['sbquo', '\u201a'],
  ['ldquo', '\u201c'],
  ['rdquo', '\u201d'],
  ['bdquo', '\u201e'],
  ['bull', '\u2022'],
  ['euro', '\u20ac'],
  ['trade', '\u2122'],
  ['zwnj', '\u200c'],
  ['zwj', '\u200d'],
  ['ensp', '\u2002'],
  ['emsp', '\u2003'],
  ['thinsp', '\u2009'],
  ['dagger', '\u2020'],
  ['rarr', '\u2192'],
  ['larr', '\u2190'],
  ['oelig', '\u0153'],
  ['OElig', '\u0152'],
  ['scaron', '\u0161'],
  ['Scaron', '\u0160'],
  ['tab', '\t'],
  ['newline', '\n'],
  ['colon', ':'],
  ['sol', '/'],
  ['period', '.'],
  ['commat', '@'],
  ['lpar', '('],
  ['rpar', ')'],
]);
for (const [i, name] of LATIN1.split(' ').entries()) NAMED.set(name, String.fromCharCode(160 + i));

function fromCodePoint(cp: number): string {
  if (!Number.isFinite(cp) || cp <= 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
    return '\ufffd';
  return String.fromCodePoint(cp);
}

/** Decodes HTML character references (numeric and the common named ones; unknown ones stay). */
export function decodeEntities(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(
    /&(?:#(\d{1,8})|#[xX]([0-9a-fA-F]{1,7})|([A-Za-z][A-Za-z0-9]{1,31}));?/g,
    (m, dec, hex, name) => {
      if (dec !== undefined) return fromCodePoint(Number.parseInt(dec, 10));
      if (hex !== undefined) return fromCodePoint(Number.parseInt(hex, 16));
      return NAMED.get(name) ?? NAMED.get(String(name).toLowerCase()) ?? m;
    },
  );
}

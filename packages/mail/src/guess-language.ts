const STOP_WORDS: Record<string, string> = {
  en: 'the and to of in is you your for that this with on are be have it not we our will please from by at as or if can has been was account here click',
  de: 'der die das und ist nicht sie ich ein eine zu den mit für auf dem des sich von bitte ihr ihre ihnen wir werden wird auch es im bei oder nur sind haben kann ihrem ihren einen noch wenn über',
  pt: 'o os as da do das dos não um uma para com por seu sua você em no na mais como foi ao pelo pela está são ser sua seus nosso isso até já também conta',
  nl: 'het een en van is dat niet ik je u uw wij we zijn op te voor met er maar als bij ook om aan naar door dit deze wordt kunt heeft hebben uw onze',
  fr: 'le la les des du et est un une pour que qui pas vous votre vos nous dans sur au aux avec ce cette il elle sont être par ne plus été ou',
  es: 'el la los las del y es que no un una para por con su sus usted en se lo más como está son al nuestro este esta ha puede cuenta',
  it: 'il lo la gli le di del della e è che non un una per con suo sua vostro nel nella sono come più anche al alla questo questa ti',
  pl: 'i w z na nie się jest do to że o jak po co ale od za dla jego tak są przez być może oraz państwa twoje które',
};

const WORDS = new Map<string, string[]>();
/** Length of the longest stop word (longer words need no look-up). */
let MAX_WORD = 0;
for (const [lang, list] of Object.entries(STOP_WORDS)) {
  for (const w of list.split(' ')) {
    const langs = WORDS.get(w) ?? [];
    langs.push(lang);
    WORDS.set(w, langs);
    MAX_WORD = Math.max(MAX_WORD, w.length);
  }
}

/** Letters packed into a word key (the stop words are shorter). */
const KEY_LETTERS = 10;
/**
 * The ASCII stop words by key: the letters a-z as the digits 1-26 of a base-27 number (exact below
 * 2^53 for KEY_LETTERS letters), so that a word of a lower-case ASCII text is looked up unsliced.
 */
const ASCII_WORDS = new Map<number, string[]>();
for (const [w, langs] of WORDS) {
  if (!/^[a-z]+$/.test(w)) continue;
  let key = 0;
  for (let i = 0; i < w.length; i++) key = key * 27 + (w.charCodeAt(i) - 0x60);
  ASCII_WORDS.set(key, langs);
}
if (MAX_WORD > KEY_LETTERS) throw new Error('guessLanguage: a stop word is longer than a word key');

/** Characters that point at one language. */
const HINTS: [RegExp, string][] = [
  [/[ãõ]/g, 'pt'],
  [/ß/g, 'de'],
  [/[ñ¿¡]/g, 'es'],
  [/[łąęśźżćń]/g, 'pl'],
  [/[èàù]/g, 'fr'],
];

/** Scripts that identify the language (or a close family) on their own. */
const SCRIPTS: [RegExp, string][] = [
  [/[\u3040-\u30ff]/g, 'ja'],
  [/[\uac00-\ud7af]/g, 'ko'],
  [/[\u4e00-\u9fff]/g, 'zh'],
  [/[\u0400-\u04ff]/g, 'ru'],
  [/[\u0370-\u03ff]/g, 'el'],
  [/[\u0600-\u06ff]/g, 'ar'],
  [/[\u0590-\u05ff]/g, 'he'],
  [/[\u0e00-\u0e7f]/g, 'th'],
];

/** Characters of text looked at. */
/** Characters of the text the guess reads (callers may cut longer texts to this first). */
export const LANGUAGE_SAMPLE_CHARS = 4096;
const SAMPLE_CHARS = LANGUAGE_SAMPLE_CHARS;

const WORD = /\p{L}+/gu;

/** How many characters of `s` a one-character pattern (`/[...]/g`) matches. */
function countChars(s: string, re: RegExp): number {
  return s.length - s.replace(re, '').length;
}

/**
 * Guesses the language of a text (ISO 639-1) from stop words over its first few KB: en de pt nl fr es
 * it pl, plus a few languages told by their script (ja ko zh ru el ar he th). Undefined when the text
 * is too short or no language clearly wins.
 */
export function guessLanguage(text: string): string | undefined {
  const sample = (text.length > SAMPLE_CHARS ? text.slice(0, SAMPLE_CHARS) : text).toLowerCase();
  const score = new Map<string, number>();
  const ascii = !/[^\u0000-\u007f]/.test(sample);
  let tokens = 0;
  let letters = 0;
  if (ascii) {
    // the runs of a-z (what /[a-z]+/g finds), each looked up by its key
    const n = sample.length;
    let i = 0;
    while (i < n) {
      let c = sample.charCodeAt(i);
      if (c < 0x61 || c > 0x7a) {
        i++;
        continue;
      }
      const start = i;
      let key = 0;
      do {
        if (i - start < KEY_LETTERS) key = key * 27 + (c - 0x60);
        i++;
        c = i < n ? sample.charCodeAt(i) : 0;
      } while (c >= 0x61 && c <= 0x7a);
      tokens++;
      letters += i - start;
      if (i - start > MAX_WORD) continue;
      const langs = ASCII_WORDS.get(key);
      if (langs === undefined) continue;
      for (const l of langs) score.set(l, (score.get(l) ?? 0) + 1 / langs.length);
    }
    if (tokens === 0) return undefined;
  } else {
    const words = sample.match(WORD);
    if (words === null) return undefined;
    tokens = words.length;
    for (const w of words) {
      letters += w.length;
      if (w.length > MAX_WORD) continue;
      const langs = WORDS.get(w);
      if (langs === undefined) continue;
      for (const l of langs) score.set(l, (score.get(l) ?? 0) + 1 / langs.length);
    }
  }
  if (letters < 20) return undefined;
  // an ASCII text has none of the characters of the scripts and hints below
  if (!ascii && /[^\u0000-\u024f\u1e00-\u1eff\u2000-\u206f]/.test(sample)) {
    for (const [re, lang] of SCRIPTS) {
      const n = countChars(sample, re);
      if (n > letters * 0.3) {
        // kana wins over shared Han characters
        if (lang === 'zh' && countChars(sample, SCRIPTS[0]?.[0] as RegExp) > n * 0.1) return 'ja';
        return lang;
      }
    }
  }
  if (!ascii && /[^\u0000-\u00de]/.test(sample)) {
    for (const [re, lang] of HINTS) {
      const n = countChars(sample, re);
      if (n > 0) score.set(lang, (score.get(lang) ?? 0) + Math.min(n, 5) * 0.5);
    }
  }
  let best: [string, number] | undefined;
  let second = 0;
  for (const [lang, v] of score) {
    if (best === undefined || v > best[1]) {
      if (best !== undefined) second = best[1];
      best = [lang, v];
    } else if (v > second) second = v;
  }
  if (best === undefined) return undefined;
  const min = tokens < 30 ? 2 : 3;
  if (best[1] < min) return undefined;
  if (best[1] < second * 1.25) return undefined;
  return best[0];
}

/**
 * Does a domain label look machine-generated ("ncmsdwtds", "9i6ysojn6t")? Throw-away domains for
 * bulk phishing are registered by the thousand with such names; organisations use words. Kept
 * conservative: digits interleaved with letters, or almost no vowels in a long label.
 */
export function looksRandom(label: string): boolean {
  const l = label.toLowerCase();
  if (l.length < 6 || l.startsWith('xn--')) return false;
  if (/[a-z][0-9]+[a-z]+[0-9]|[0-9][a-z]+[0-9]+[a-z]/.test(l)) return true;
  const letters = l.replace(/[^a-z]/g, '');
  const vowels = letters.replace(/[^aeiouy]/g, '').length;
  return letters.length >= 10 && vowels / letters.length < 0.15;
}

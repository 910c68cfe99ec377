/**
 * AMQP topic matching: words are separated by '.', '*' matches exactly one word, '#' matches zero or
 * more words.
 */
export function topicMatches(pattern: string, routingKey: string): boolean {
  return matchWords(
    pattern === '' ? [] : pattern.split('.'),
    0,
    routingKey === '' ? [] : routingKey.split('.'),
    0,
  );
}

function matchWords(p: string[], pi: number, k: string[], ki: number): boolean {
  while (pi < p.length) {
    const word = p[pi];
    if (word === '#') {
      if (pi === p.length - 1) return true;
      for (let skip = ki; skip <= k.length; skip++) {
        if (matchWords(p, pi + 1, k, skip)) return true;
      }
      return false;
    }
    if (ki >= k.length) return false;
    if (word !== '*' && word !== k[ki]) return false;
    pi++;
    ki++;
  }
  return ki === k.length;
}

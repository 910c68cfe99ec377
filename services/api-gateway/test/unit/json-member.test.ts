import { describe, expect, it } from 'vitest';
import { topLevelMember } from '../../src/json-member.ts';

/** A small seeded generator (mulberry32), so a failure can be replayed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = [
  'a',
  'Z',
  ' ',
  '"',
  '\\',
  '\\"',
  '{',
  '}',
  '[',
  ']',
  ',',
  ':',
  'é',
  '\u2028',
  '\n',
  '\ud83d\ude00',
  '\\\\',
];
const SPACES = ['', ' ', '\n', '\t', '\r\n  '];

/** Random JSON text of a random value, with random spacing and random escapes. */
function text(r: () => number, depth: number): string {
  const sp = () => SPACES[Math.floor(r() * SPACES.length)] as string;
  const k = Math.floor(r() * (depth > 3 ? 4 : 7));
  if (k === 0) return String(Math.floor(r() * 2000) - 1000) + (r() < 0.3 ? '.5e-3' : '');
  if (k === 1) return ['true', 'false', 'null'][Math.floor(r() * 3)] as string;
  if (k <= 3) {
    let s = '';
    for (let i = Math.floor(r() * 8); i > 0; i--) s += PIECES[Math.floor(r() * PIECES.length)];
    const json = JSON.stringify(s);
    return r() < 0.3 ? json.replace(/a/g, '\\u0061') : json;
  }
  if (k <= 4) {
    const items = Array.from(
      { length: Math.floor(r() * 4) },
      () => sp() + text(r, depth + 1) + sp(),
    );
    return `[${items.join(',') || sp()}]`;
  }
  const members = Array.from(
    { length: Math.floor(r() * 4) },
    (_, i) =>
      `${sp()}${JSON.stringify(`k${i}${r() < 0.2 ? '"}' : ''}`)}${sp()}:${sp()}${text(r, depth + 1)}${sp()}`,
  );
  return `{${members.join(',') || sp()}}`;
}

describe('topLevelMember', () => {
  it('finds the exact text of a member among others, whatever they hold (2000 random bodies)', () => {
    const r = rng(20261122);
    for (let n = 0; n < 2000; n++) {
      const sp = () => SPACES[Math.floor(r() * SPACES.length)] as string;
      const value = text(r, 0);
      const others = Array.from({ length: Math.floor(r() * 3) }, (_, i) => [
        `${sp()}"o${i}"${sp()}:${sp()}`,
        text(r, 1),
      ]);
      const at = Math.floor(r() * (others.length + 1));
      const members = others.map(([k, v]) => `${k}${v}${sp()}`);
      members.splice(at, 0, `${sp()}"email"${sp()}:${sp()}${value}${sp()}`);
      const body = `${r() < 0.1 ? '\ufeff' : ''}${sp()}{${members.join(',')}}${sp()}`;
      expect(() => JSON.parse(body.replace(/^\ufeff/, '')), body).not.toThrow();
      const span = topLevelMember(body, 'email');
      expect(span, body).toBeDefined();
      expect(body.slice(span?.start, span?.end), body).toBe(value);
    }
  });

  it('answers undefined when the member is absent, repeated, or a key is escaped', () => {
    expect(topLevelMember('{"a":1}', 'email')).toBeUndefined();
    expect(topLevelMember('{}', 'email')).toBeUndefined();
    expect(topLevelMember('[{"email":1}]', 'email')).toBeUndefined();
    expect(topLevelMember('"email"', 'email')).toBeUndefined();
    expect(topLevelMember('{"a":{"email":1}}', 'email')).toBeUndefined();
    expect(topLevelMember('{"email":1,"email":2}', 'email')).toBeUndefined();
    expect(topLevelMember('{"email":1,"\\u0065mail":2}', 'email')).toBeUndefined();
    expect(topLevelMember('{"\\"":0,"email":1}', 'email')).toBeUndefined();
    expect(topLevelMember('{"x":"\\\\","email":[1]}', 'email')).toEqual({ start: 18, end: 21 });
  });
});

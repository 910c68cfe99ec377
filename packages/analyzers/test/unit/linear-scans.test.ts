/**
 * The linear scans that replaced backtracking regular expressions over header values and bodies
 * (issue 15, "Quadratic regexes stall the process") give the answers of the patterns they replace:
 * each is compared with its original regex on many random strings built from the characters that
 * pattern reads. packages/analyzers/test/unit/hostile-headers.test.ts times them on adversarial input.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addressRun } from '../../src/directory/lookup.ts';
import {
  angleAddress,
  blankGroups,
  commaParts,
  normalizeName,
  parseFromHeader,
} from '../../src/directory/names.ts';
import {
  addressesIn,
  fakeReply,
  junkSuffix,
  malformedDisplayName,
  numberedLocalPart,
} from '../../src/headers/bulk-signs.ts';
import { blankBrackets } from '../../src/headers/context.ts';
import { unfence } from '../../src/llm/answer.ts';
import {
  addressIn,
  angleContent,
  domainOf,
  firstAddress,
  parseAddressHeader,
} from '../../src/shared/header-values.ts';
import { stripTags } from '../../src/shared/view.ts';

const RUNS = { numRuns: 3000 };

/** Strings of up to `max` pieces, each one of `pieces` (characters or short tokens). */
function textOf(pieces: string[], max = 40): fc.Arbitrary<string> {
  return fc.array(fc.constantFrom(...pieces), { maxLength: max }).map((a) => a.join(''));
}

/** Asserts that `actual` and `expected` agree on every generated string. */
function same<T>(gen: fc.Arbitrary<string>, actual: (s: string) => T, expected: (s: string) => T) {
  fc.assert(
    fc.property(gen, (s) => {
      expect(actual(s)).toEqual(expected(s));
    }),
    RUNS,
  );
}

// ---- the original implementations, as they were before the linear rewrites ----

const OLD = {
  angleContent: (s: string) => /<([^>]+)>/.exec(s)?.[1],
  blankBrackets: (s: string) => s.replace(/\[[^\]]*\]/g, ' '),
  addressIn: (s: string) => {
    const m = /[A-Za-z0-9._%+-]+@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)/.exec(s);
    return m ? [m[0], m[1]] : undefined;
  },
  blankGroups: (s: string) => s.replace(/\([^)]*\)|\[[^\]]*\]/g, ' '),
  commaParts: (s: string) => {
    const m = /^\s*([^,]+),\s*([^,]+)$/.exec(s);
    return m ? [m[1], m[2]] : undefined;
  },
  angleAddress: (s: string) => {
    const m = /^\s*(.*?)\s*<([^<>]+)>\s*$/.exec(s);
    return m ? [m[1], m[2]] : undefined;
  },
  normalizeName(raw: string): string {
    let s = raw
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase();
    s = s.replace(/\([^)]*\)|\[[^\]]*\]/g, ' ');
    s = s.replace(/["'`\u2018\u2019\u201c\u201d]/g, '');
    const comma = /^\s*([^,]+),\s*([^,]+)$/.exec(s);
    if (comma?.[1] && comma[2] && !s.includes('@')) s = `${comma[2]} ${comma[1]}`;
    s = s.replace(/[^\p{L}\p{N}@.\s-]+/gu, ' ').replace(/[-.]/g, ' ');
    s = s.replace(/\b(mr|mrs|ms|dr|prof|herr|frau|sr|sra|m|mme)\b/g, ' ');
    return s.replace(/\s+/g, ' ').trim();
  },
  parseFromHeader(value: string) {
    const m = /^\s*(.*?)\s*<([^<>]+)>\s*$/.exec(value);
    if (!m) {
      const bare = value.trim();
      return { displayName: '', address: bare.includes('@') ? bare.toLowerCase() : undefined };
    }
    const displayName = (m[1] ?? '')
      .replace(/^"(.*)"$/, '$1')
      .replace(/\\"/g, '"')
      .trim();
    return { displayName, address: m[2]?.trim().toLowerCase() };
  },
  addressRun: (s: string) => /[^\s<>"]+@[^\s<>"]+/.exec(s)?.[0],
  firstAddress: (s: string) =>
    /[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@[A-Za-z0-9.-]+\.[A-Za-z0-9-]{2,}/.exec(s)?.[0],
  parseAddressHeader(value: string) {
    const ADDR_RE = /[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@[A-Za-z0-9.-]+\.[A-Za-z0-9-]{2,}/;
    const v = value.trim();
    const angle = /<([^<>]*)>\s*$/.exec(v) ?? /<([^<>]*@[^<>]*)>/.exec(v);
    if (angle) {
      const inner = ADDR_RE.exec(angle[1] ?? '');
      const display = v
        .slice(0, angle.index)
        .trim()
        .replace(/^"(.*)"$/s, '$1')
        .replace(/\\"/g, '"')
        .trim();
      return inner ? { address: inner[0].toLowerCase(), display_name: display } : undefined;
    }
    const m = ADDR_RE.exec(v);
    if (!m) return undefined;
    const comment = /\(([^)]*)\)/.exec(v);
    return { address: m[0].toLowerCase(), display_name: comment?.[1]?.trim() ?? '' };
  },
  domainOf(address: string | undefined): string | undefined {
    if (!address) return undefined;
    const at = address.lastIndexOf('@');
    if (at < 0) return undefined;
    const d = address
      .slice(at + 1)
      .toLowerCase()
      .replace(/[>\].\s]+$/, '');
    return d.length > 0 ? d : undefined;
  },
  stripTags: (s: string) => s.replace(/<[^>]*>/g, ' '),
  unfence(text: string): string {
    const t = text.trim();
    const m = /^```(?:json)?\s*([\s\S]*?)\s*```$/i.exec(t);
    return m?.[1] ?? t;
  },
  numberedLocalPart: (s: string) => /^[a-z]+[._-]\w*[._-]?\d+[._-]\d{4,}$/.test(s),
  addressesIn: (s: string) => s.match(/[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*/g) ?? [],
  dotCaps: (s: string) => /(?:[a-z!?.\s])\.+([A-Z]{3,12})$/.exec(s.trim())?.[1],
  hasTag: (s: string) => /<[^>]*>/.test(s),
  replyPrefix: (s: string) =>
    /^\s*(?:re|aw|antw|sv|rif|res|r|fwd?|wg|tr|rv)\s*(?:\[\d+\])?\s*:/i.test(s),
};

/** White space JavaScript's \s and trim() know, and line terminators. */
const SPACES = [' ', '\t', '\n', '\r', '\u00a0', '\u2028', '\u2029', '\u3000', '\ufeff'];

describe('linear scans answer what the regexes they replace answered', () => {
  it('headers: angleContent = /<([^>]+)>/', () => {
    same(textOf(['<', '>', 'a', ' ', '<>', '.']), angleContent, OLD.angleContent);
  });

  it('headers: blankBrackets = replace(/\\[[^\\]]*\\]/g, " ")', () => {
    same(textOf(['[', ']', 'a', ' ', '[]']), blankBrackets, OLD.blankBrackets);
  });

  it('headers: addressIn = the address-in-display-name pattern', () => {
    same(
      textOf(['a', 'Z', '0', '.', '-', '_', '%', '+', '@', ' ', '<', 'é', '..', 'b.c']),
      addressIn,
      OLD.addressIn,
    );
  });

  it('directory: blankGroups = replace(/\\([^)]*\\)|\\[[^\\]]*\\]/g, " ")', () => {
    same(textOf(['(', ')', '[', ']', 'a', ' ', '()', '[]']), blankGroups, OLD.blankGroups);
  });

  it('directory: commaParts = /^\\s*([^,]+),\\s*([^,]+)$/', () => {
    same(textOf([',', 'a', 'b', ...SPACES]), commaParts, OLD.commaParts);
  });

  it('directory: angleAddress = /^\\s*(.*?)\\s*<([^<>]+)>\\s*$/', () => {
    same(textOf(['<', '>', 'a', '"', '@', ...SPACES]), angleAddress, OLD.angleAddress);
  });

  it('directory: parseFromHeader and normalizeName as before', () => {
    const gen = textOf([
      '<',
      '>',
      'a',
      'B',
      '"',
      '\\"',
      '@',
      ',',
      '(',
      ')',
      '[',
      ']',
      'é',
      ...SPACES,
    ]);
    same(gen, parseFromHeader, OLD.parseFromHeader);
    same(
      textOf(['(', ')', '[', ']', ',', 'a', 'Mr', 'dr.', '@', '.', '-', 'é', '"', "'", ...SPACES]),
      normalizeName,
      OLD.normalizeName,
    );
  });

  it('directory: addressRun = /[^\\s<>"]+@[^\\s<>"]+/', () => {
    same(textOf(['@', 'a', '.', '<', '>', '"', ...SPACES]), addressRun, OLD.addressRun);
  });

  it('header values: firstAddress = ADDR_RE', () => {
    same(
      textOf(['a', 'Z', '0', '.', '-', '@', '!', '_', '~', ' ', '<', '..', 'bc', '.de']),
      firstAddress,
      OLD.firstAddress,
    );
    const shaped = fc
      .tuple(
        textOf(['a', '!', '.', ' ', '<'], 4),
        fc.constantFrom('@', '@@', ''),
        textOf(['ab', 'c', '.', '..', '-', '.de', '.f', ' ', '@'], 8),
      )
      .map((p) => p.join(''));
    same(shaped, firstAddress, OLD.firstAddress);
    same(shaped, addressIn, OLD.addressIn);
  });

  it('header values: parseAddressHeader as before', () => {
    same(
      textOf(['<', '>', '@', 'a', 'bc', '.', '.de', '(', ')', '"', '\\"', ' ', '\n']),
      parseAddressHeader,
      OLD.parseAddressHeader,
    );
  });

  it('header values: domainOf = replace(/[>\\].\\s]+$/, "")', () => {
    same(textOf(['@', 'a', 'B', '>', ']', '.', ...SPACES]), domainOf, OLD.domainOf);
  });

  it('view: stripTags = replace(/<[^>]*>/g, " ")', () => {
    same(textOf(['<', '>', 'a', ' ', '<>']), stripTags, OLD.stripTags);
  });

  it('llm: unfence = /^```(?:json)?\\s*([\\s\\S]*?)\\s*```$/i', () => {
    same(
      textOf(['```', '`', 'json', 'JSON', 'Json', 'js', 'x', '{}', ...SPACES], 14),
      unfence,
      OLD.unfence,
    );
  });

  it('bulk signs: numberedLocalPart = /^[a-z]+[._-]\\w*[._-]?\\d+[._-]\\d{4,}$/', () => {
    same(
      textOf(['a', 'z', 'B', '.', '_', '-', '0', '7', '9', 'é', '0000'], 16),
      numberedLocalPart,
      OLD.numberedLocalPart,
    );
    // the shapes it names, built on purpose (random strings rarely reach four final digits)
    const shaped = fc
      .tuple(
        textOf(['a', 'z', 'B', '1'], 4),
        fc.constantFrom('.', '_', '-', 'x'),
        textOf(['a', '_', '1', '9', '.', '-'], 6),
        fc.constantFrom('.', '_', '-', 'x', ''),
        textOf(['1', '2', 'a'], 4),
        fc.constantFrom('.', '_', '-', 'x'),
        textOf(['1', '2', 'a'], 7),
      )
      .map((p) => p.join(''));
    same(shaped, numberedLocalPart, OLD.numberedLocalPart);
  });

  it('bulk signs: addressesIn = match(/[a-z0-9._%+-]+@[a-z0-9-]+(?:\\.[a-z0-9-]+)*/g)', () => {
    same(
      textOf(['a', '0', '.', '_', '%', '+', '-', '@', ' ', '!', '..', 'b.c']),
      addressesIn,
      OLD.addressesIn,
    );
  });

  it('bulk signs: the dot-caps junk suffix, tags in a display name, reply prefixes', () => {
    const dotCaps = (s: string) => junkSuffix(s)?.match(/^\.([A-Z]{3,12})$/)?.[1];
    // junkSuffix answers `.CAPS` from its first pattern, else a token of another shape
    same(textOf(['a', '.', 'A', 'B', 'C', '!', '?', 'x', '1', ...SPACES]), dotCaps, (s) => {
      const old = OLD.dotCaps(s);
      return old ?? junkSuffix(s)?.match(/^\.([A-Z]{3,12})$/)?.[1];
    });
    same(
      textOf(['a', '.', 'A', 'B', 'C', '!', '?', ' ', '\t']),
      (s) => /[a-z!?.\s]\.([A-Z]{3,12})$/.exec(s.trim())?.[1],
      OLD.dotCaps,
    );
    // malformedDisplayName's second test: a tag and a dangling comma
    same(
      textOf(['<', '>', 'a', ',', ' ']),
      (s) => malformedDisplayName(s) === 'an address and a dangling comma',
      (s) => !/["“”]/.test(s) && OLD.hasTag(s) && /,\s*$/.test(s),
    );
    same(
      textOf(['re', 'RE', 'fw', 'fwd', 'r', 'x', ':', '[', '1', ']', ...SPACES], 12),
      (s) => fakeReply(s, []),
      OLD.replyPrefix,
    );
  });
});

import { describe, expect, it } from 'vitest';
import { type Brand, loadLexicons } from '../../src/shared/lexicons.ts';
import { findLookalike, protectedNames } from '../../src/shared/lookalike.ts';

const microsoft: Brand = {
  id: 'microsoft',
  names: ['microsoft', 'sharepoint'],
  case_names: [],
  domains: ['microsoft.com', 'sharepoint.com'],
  platform_domains: ['sharepointonline.com'],
  sends_for_anyone: false,
  source: 'test',
};

describe('a brand’s platform domains (issue 27)', () => {
  it('are the brand’s own: never its look-alike, nor a name to protect', () => {
    const names = protectedNames([microsoft], []);
    expect(findLookalike('sharepointonline.com', names)).toBeUndefined();
    expect(names.some((n) => n.label === 'sharepointonline')).toBe(false);
    // the brand's names are still protected around them
    expect(findLookalike('sharepoint-login.com', names)?.owner).toBe('microsoft');
    const { platform_domains: _none, ...withoutPlatform } = microsoft;
    expect(
      findLookalike('sharepointonline.com', protectedNames([withoutPlatform], []))?.owner,
    ).toBe('microsoft');
  });

  it('a brand’s sending domain the free-mail lists hold by mistake is no free mail', () => {
    const lex = loadLexicons();
    expect(lex.freeMail.has('facebookmail.com')).toBe(false);
    expect(lex.freeMail.has('gmail.com')).toBe(true);
    expect(lex.freeMail.has('facebook.com')).toBe(true); // it gave its users addresses there
  });
});

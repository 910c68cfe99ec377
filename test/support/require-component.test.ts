import { afterEach, describe, expect, it } from 'vitest';
import { MissingComponentError, requireComponent } from './require-component.ts';

const before = process.env.CI;
afterEach(() => {
  if (before === undefined) delete process.env.CI;
  else process.env.CI = before;
});

describe('requireComponent', () => {
  it('answers true for a component that is there, in CI or not', () => {
    process.env.CI = 'true';
    expect(requireComponent('Dovecot', true, 'apt-get install dovecot-imapd')).toBe(true);
    delete process.env.CI;
    expect(requireComponent('Dovecot', true, 'apt-get install dovecot-imapd')).toBe(true);
  });

  it('skips a missing component on a laptop', () => {
    delete process.env.CI;
    expect(requireComponent('Postfix', false, 'apt-get install postfix')).toBe(false);
  });

  it('fails CI, naming the missing component and how to get it', () => {
    process.env.CI = 'true';
    expect(() => requireComponent('Postfix', false, 'apt-get install postfix')).toThrow(
      MissingComponentError,
    );
    expect(() => requireComponent('Postfix', false, 'apt-get install postfix')).toThrow(
      /Postfix is required in CI.*apt-get install postfix/,
    );
  });
});

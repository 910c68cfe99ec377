import { describe, expect, it } from 'vitest';
import { errorText } from '../../src/index.ts';

describe('errorText (the one error formatter)', () => {
  it("gives an Error's message, or its name when the message is empty", () => {
    expect(errorText(new TypeError('bad input'))).toBe('bad input');
    expect(errorText(new RangeError())).toBe('RangeError');
  });

  it('gives a string as it is and a number or boolean as written', () => {
    expect(errorText('socket hang up')).toBe('socket hang up');
    expect(errorText(42)).toBe('42');
    expect(errorText(false)).toBe('false');
  });

  it('never calls toString of anything else: a value that cannot be printed is not a crash', () => {
    const hostile = {
      toString() {
        throw new Error('toString was called');
      },
    };
    expect(errorText(hostile)).toBe('unknown error');
    expect(errorText(Object.create(null))).toBe('unknown error');
    expect(errorText(undefined)).toBe('unknown error');
    expect(errorText(null)).toBe('unknown error');
  });
});

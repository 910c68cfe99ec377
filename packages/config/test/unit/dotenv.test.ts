import { describe, expect, it } from 'vitest';
import { parseDotenv } from '../../src/dotenv.ts';

describe('parseDotenv', () => {
  it('reads KEY=value lines, comments, export prefix and quotes', () => {
    const text = [
      '# a comment',
      '',
      'PLAIN=value',
      'export EXPORTED=yes',
      'SPACED = padded value  ',
      'INLINE=abc # trailing comment',
      'HASH=abc#not-a-comment',
      "SINGLE='a \\n literal # kept'",
      'DOUBLE="line1\\nline2 \\"q\\" # kept"',
      'MULTI="first',
      'second"',
      'EMPTY=',
      'URL=postgres://u:p@h:5432/db?sslmode=require',
    ].join('\n');
    const { values, invalidLines } = parseDotenv(text);
    expect(invalidLines).toEqual([]);
    expect(values).toEqual({
      PLAIN: 'value',
      EXPORTED: 'yes',
      SPACED: 'padded value',
      INLINE: 'abc',
      HASH: 'abc#not-a-comment',
      SINGLE: 'a \\n literal # kept',
      DOUBLE: 'line1\nline2 "q" # kept',
      MULTI: 'first\nsecond',
      EMPTY: '',
      URL: 'postgres://u:p@h:5432/db?sslmode=require',
    });
  });

  it('handles CRLF, a BOM, and later keys winning', () => {
    const { values } = parseDotenv('\uFEFFA=1\r\nA=2\r\nB=x\r\n');
    expect(values).toEqual({ A: '2', B: 'x' });
  });

  it('reports lines that are not assignments', () => {
    const { values, invalidLines } = parseDotenv(
      'GOOD=1\njust words\n=novalue\nBAD KEY=1\nOPEN="never closed\n',
    );
    expect(values).toEqual({ GOOD: '1' });
    expect(invalidLines).toEqual([2, 3, 4, 5]);
  });
});

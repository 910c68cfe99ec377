import { describe, expect, it } from 'vitest';
import { decodeEntities, HTML_TO_TEXT_MAX_CHARS, htmlToText } from '../../src/index.ts';

describe('htmlToText', () => {
  it('drops script, style, title and comments, keeps visible text with line breaks', () => {
    const t = htmlToText(
      '<html><head><title>T</title><style>p{color:red}</style></head><body><!-- hidden --><h1>Hello</h1><p>First&nbsp;line<br>second</p><script>var a="<p>no</p>";</script><ul><li>one</li><li>two</li></ul></body></html>',
    );
    expect(t).toBe('Hello\nFirst line\nsecond\n- one\n- two');
  });
  it('decodes named and numeric entities and removes zero-width characters', () => {
    expect(htmlToText('Pay&#x200B;Pal &amp; Co &euro;5 &#8364;6 &eacute;t&eacute; &unknown;')).toBe(
      'PayPal & Co €5 €6 été &unknown;',
    );
    expect(decodeEntities('&#0; &#x110000; &lt;b&gt;')).toBe('\ufffd \ufffd <b>');
  });
  it('copes with broken markup in linear time and bounds the output', () => {
    expect(htmlToText('a < b and <script>never closed')).toBe('a < b and');
    expect(htmlToText('<p'.repeat(100_000)).length).toBeLessThanOrEqual(HTML_TO_TEXT_MAX_CHARS);
    expect(htmlToText('<script>'.repeat(50_000))).toBe('');
    expect(htmlToText('x '.repeat(1_000_000)).length).toBeLessThanOrEqual(HTML_TO_TEXT_MAX_CHARS);
  });
});

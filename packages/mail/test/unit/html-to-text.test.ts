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

  it('collapses white space: a run with a line break is one line break, any other run one space', () => {
    expect(htmlToText('a \t\r\n b\u00a0\u00a0c\u2002d\u3000e')).toBe('a\nb c d\u3000e');
    expect(htmlToText('\u3000 lead and trail \u2028')).toBe('lead and trail');
    expect(htmlToText('x \u200b y')).toBe('x y');
    expect(htmlToText('one<br> \n <br>\r\ntwo')).toBe('one\ntwo');
    expect(htmlToText('a<td>b</td><th>c')).toBe('a b c');
    expect(htmlToText('<li>one</li><LI>two')).toBe('- one\n- two');
  });
  it('skips hidden elements whatever their case, unless self-closed', () => {
    expect(
      htmlToText(
        '<SCRIPT type="x">var a = "<p>";</script >after<Style>p{}</STYLE>shown<script/>kept',
      ),
    ).toBe('aftershownkept');
    expect(htmlToText('<title>T</title><template><p>no</p></template><xml>x</xml>ok')).toBe('ok');
  });
  it('keeps stray `<`, drops doctype, processing instructions and unterminated comments', () => {
    expect(htmlToText('a <b and <1 c < d')).toBe('a');
    expect(htmlToText('x <1 c < d')).toBe('x <1 c < d');
    expect(htmlToText('<!doctype html><?xml version="1.0"?>text<!-- never closed')).toBe('text');
    expect(htmlToText(`<${'q'.repeat(70)}>long name<blockquote>quote</blockquote>`)).toBe(
      'long name\nquote',
    );
  });
  it('ends a tag at its first `>`, even inside quotes (text view only)', () => {
    expect(htmlToText('<p title="a > b">x</p>')).toBe('b">x');
  });
  it('decodes entities without a semicolon and keeps a bare `&`', () => {
    expect(htmlToText('caf&eacute; &AMP; &#x1F600; &#65 &unknown; &')).toBe(
      'caf\u00e9 & \u{1F600} A &unknown; &',
    );
  });
  it('stays linear on long runs of white space and of tags', () => {
    const t0 = performance.now();
    expect(htmlToText(`a${' \t'.repeat(500_000)}b`)).toBe('a b');
    expect(htmlToText(`a${' \n'.repeat(500_000)}b`)).toBe('a\nb');
    expect(htmlToText(`a${'<br>'.repeat(200_000)}b`)).toBe('a\nb');
    expect(performance.now() - t0).toBeLessThan(5000);
  });
});

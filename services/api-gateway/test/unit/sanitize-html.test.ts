import { describe, expect, it } from 'vitest';
import { sanitizeHtml, sanitizeStyle } from '../../src/sanitize-html.ts';

/** What must never survive: anything that runs or loads. */
function expectInert(out: string): void {
  const lower = out.toLowerCase();
  expect(lower).not.toMatch(/<script|<iframe|<object|<embed|<svg|<math|<base|<meta|<link|<form/);
  expect(lower).not.toMatch(/<style|<input|<textarea|<template|<frame/);
  expect(lower).not.toMatch(/\son[a-z]+\s*=/);
  expect(lower).not.toMatch(/\s(?:href|srcset|background|action|formaction|xlink:href)\s*=/);
  expect(lower).not.toContain('url(');
  expect(lower).not.toContain('@import');
  // every src left is a data: image
  for (const m of lower.matchAll(/\ssrc="([^"]*)"/g)) expect(m[1]).toMatch(/^data:image\//);
}

describe('sanitizeHtml: hostile HTML becomes inert', () => {
  const cases: Record<string, string> = {
    'script element': '<p>hi</p><script>alert(1)</script><p>there</p>',
    'script in an attribute': '<img src=x onerror="alert(1)"><div onclick=alert(1)>x</div>',
    'event handler without quotes or spaces': '<a/onmouseover=alert(1)>x</a>',
    'javascript: link': '<a href="javascript:alert(1)">click</a>',
    'entity-encoded javascript: link': '<a href="&#106;avascript&colon;alert(1)">c</a>',
    'css @import and url()':
      '<style>@import url(https://evil.example/x.css);</style><p style="background:url(https://evil.example/p.gif);color:red">x</p>',
    'css escapes and expression':
      '<div style="width: expression(alert(1)); b\\61 ckground: u\\72l(//e.example/x)">x</div>',
    base: '<base href="https://evil.example/"><a href="/x">rel</a>',
    'meta refresh': '<meta http-equiv="refresh" content="0;url=https://evil.example/">text',
    srcset: '<img srcset="https://evil.example/a.png 1x, https://evil.example/b.png 2x" alt=a>',
    'svg with script': '<svg><script>alert(1)</script><a xlink:href="javascript:x">s</a></svg>ok',
    'svg onload': '<svg/onload=alert(1)>',
    'nested comments': '<!-- a <!-- b --> <script>alert(1)</script> -->tail',
    'comment hiding a tag': '<!--><script>alert(1)</script>-->',
    'remote image': '<img src="https://tracker.example/pixel.gif" width=1 height=1>',
    'background attribute':
      '<table background="https://evil.example/bg.png"><tr><td>x</td></tr></table>',
    form: '<form action="https://collect.example/"><input name=p type=password><button>Sign in</button></form>',
    iframe: '<iframe src="https://evil.example/"></iframe>after',
    'object and embed': '<object data="x.swf"></object><embed src="x.swf">',
    'unclosed script': '<p>a</p><script>alert(1)',
    'unclosed attribute quote': '<p>a</p><img src="x onerror=alert(1)>',
    'upper-case tags': '<SCRIPT>alert(1)</SCRIPT><IMG SRC=x ONERROR=alert(1)>',
    'link and style sheet': '<link rel=stylesheet href="https://evil.example/s.css">t',
    'math and template':
      '<math><mi xlink:href="javascript:1">m</mi></math><template><script>1</script></template>',
    'data svg image': '<img src="data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=">',
  };
  for (const [name, html] of Object.entries(cases)) {
    it(name, () => expectInert(sanitizeHtml(html)));
  }

  it('keeps text and layout, and a link as its text with the target as data', () => {
    const out = sanitizeHtml(
      '<div class="x" style="color: red; font-weight: bold"><a href="https://evil.example/login?a=1&amp;b=2">Sign in</a></div>',
    );
    expect(out).toBe(
      '<div class="x" style="color: red; font-weight: bold"><a data-trawl-href="https://evil.example/login?a=1&amp;b=2">Sign in</a></div>',
    );
  });

  it('keeps a javascript: link only as inert data', () => {
    expect(sanitizeHtml('<a href="javascript:alert(1)">c</a>')).toBe(
      '<a data-trawl-href="javascript:alert(1)">c</a>',
    );
  });

  it('moves a remote image source to data-trawl-src and keeps data: images', () => {
    expect(sanitizeHtml('<img src="https://t.example/p.gif" alt="logo">')).toBe(
      '<img data-trawl-src="https://t.example/p.gif" alt="logo">',
    );
    const png = 'data:image/png;base64,iVBORw0KGgo=';
    expect(sanitizeHtml(`<img src="${png}">`)).toBe(`<img src="${png}">`);
  });

  it('inlines a cid: image the message holds', () => {
    const out = sanitizeHtml('<img src="cid:logo@x">', {
      inlineImages: new Map([['logo@x', 'data:image/gif;base64,R0lGOD==']]),
    });
    expect(out).toBe('<img src="data:image/gif;base64,R0lGOD==">');
  });

  it('removes a nested comment up to its first end; the rest is escaped text', () => {
    expect(sanitizeHtml('a<!-- x <!-- y --> z -->b')).toBe('a z --&gt;b');
  });

  it('escapes attribute values it keeps', () => {
    expect(sanitizeHtml("<td title='\"><script>alert(1)</script>'>x</td>")).toBe(
      '<td title="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;">x</td>',
    );
  });

  it('a `<` that starts no tag stays text', () => {
    expect(sanitizeHtml('1 < 2 and 3 > 2')).toBe('1 &lt; 2 and 3 &gt; 2');
  });

  it('keeps the text of a form and drops its controls', () => {
    expect(
      sanitizeHtml('<form action="https://c.example/"><p>Password</p><input name=p></form>'),
    ).toBe('<p>Password</p>');
  });

  it('sanitizeStyle keeps only safe declarations', () => {
    expect(sanitizeStyle('color:red; background-image: url(x); font-size: 12px')).toBe(
      'color:red; font-size: 12px',
    );
    expect(sanitizeStyle('background: u&#114;l(x)')).toBe('');
  });

  it('runs in linear time on adversarial input (no backtracking)', () => {
    // shapes that make a backtracking parser quadratic: many unclosed tags, quotes, comments
    const n = 200_000;
    const inputs = [
      '<a '.repeat(n),
      '<!--'.repeat(n),
      '<p title="'.repeat(n),
      '<'.repeat(n),
      '<script>'.repeat(n),
      '<a b=c '.repeat(n),
    ];
    for (const html of inputs) {
      const out = sanitizeHtml(html);
      expect(out.length).toBeLessThanOrEqual(html.length * 4);
    }
  });
});

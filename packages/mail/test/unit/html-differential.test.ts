import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scanTags } from '../../src/html-tags.ts';
import { extractUrls, htmlToText } from '../../src/index.ts';
import { extractUrls as legacyExtractUrls } from '../reference/legacy-extract-urls.ts';
import { scanTags as legacyScanTags } from '../reference/legacy-html-tags.ts';
import { htmlToText as legacyHtmlToText } from '../reference/legacy-html-to-text.ts';

// extractUrls, htmlToText and the tag cursor were rewritten for CPU (bench:mail --urls). These tests
// generate HTML from pieces that stress the readers (quotes in and out of tags, unclosed quotes and
// tags, entities, odd names, white space of every kind, hidden styles, forms, bases) and hold every
// answer to the implementations kept in test/reference.

const pieces = [
  '<a href="https://example.com/a?x=1&amp;y=2">Click</a>',
  "<a HREF='http://paypal.com.evil.example/login'>www.paypal.com</a>",
  '<a href=https://bare.example/x title=t>bare</a>',
  '<a href = " https://sp.example/ " >',
  '</a>',
  '<img src="https://img.example/p.gif" width="1" height="1" alt="pixel">',
  '<img src="cid:part1" alt="inline">',
  '<IMG SRC="//proto.example/i.png" ALT=\'logo\' />',
  '<div style="display:none">',
  '<div style="DISPLAY : None ;">',
  '<span style="color:#fff;background-color:#ffffff">',
  '<span style="font-size:0px">',
  '<p style="opacity:0;margin:0">',
  '<td style="overflow:hidden;max-height:0px">',
  '<td style="background-image:url(\'https://bg.example/b.png\')">',
  '</div>',
  '</span>',
  '</p>',
  '<form action="https://phish.example/post" method="POST"><input type="password" name="p"></form>',
  '<form><input type=hidden value=x></form>',
  '<base href="https://base.example/dir/">',
  '<a href="rel/path">relative</a>',
  '<link rel=stylesheet href="https://css.example/s.css">',
  '<meta http-equiv="refresh" content="0; url=https://meta.example/">',
  '<style>body{background:url(https://style.example/s.png)} @import "https://imp.example/i.css";</style>',
  '<script>var a = "<a href=\'https://script.example\'>";</script>',
  '<textarea><a href="https://ta.example">x</a></textarea>',
  '<area href="https://area.example" alt="map">',
  '<object data="https://obj.example/o.swf"></object>',
  '<iframe src="https://frame.example" hidden></iframe>',
  '<input type="image" src="https://btn.example/b.png">',
  '<table background="https://tbg.example/t.jpg">',
  '<!-- <a href="https://comment.example">c</a> -->',
  '<!DOCTYPE html>',
  '<?xml version="1.0"?>',
  '<br/>',
  '<br>',
  '<li>item',
  '<h1>Title</h1>',
  '<title>Tab</title>',
  '<a href="https://q.example/?a=\'b\'">q</a>',
  '<a href="https://unclosed.example',
  '<a title=\'unclosed href="https://x.example">t</a>',
  '<a x"y=1 href="https://odd.example">o</a>',
  '<a\thref="https://tab.example"\n>t</a>',
  '<a href="https://xn--pypal-4ve.example/">p\u0430ypal</a>',
  '<a href="hxxps://defanged.example">d</a>',
  '<a href="www.bare-www.example">w</a>',
  '<a href="mailto:someone@mail.example?subject=x">m</a>',
  '<a href="javascript:alert(1)">j</a>',
  '<a href="data:text/html;base64,PHA+">d</a>',
  '<a href="#top">top</a>',
  '<custom-element:x data-a="1">',
  '<a0123456789012345678901234567890123456789012345678901234567890123456789 href="https://long.example">',
  '<1notatag>',
  '< a href="https://space.example">',
  '</ a>',
  '<',
  '>',
  '"',
  "'",
  '=',
  '/',
  '&nbsp;',
  '&amp;',
  '&#x41;&#66;',
  '&unknown;',
  '\u00a0',
  '\u200b',
  '\u2003',
  '\u3000',
  '\r\n',
  '\n\n',
  '\t',
  '  ',
  'plain text https://text.example/path.',
  '(see http://paren.example/a_(b))',
  'www.text-www.example,',
  'caf\u00e9 \u65e5\u672c',
  'x',
];

const html = fc.array(fc.constantFrom(...pieces), { maxLength: 40 }).map((p) => p.join(''));
const text = fc
  .array(fc.constantFrom(...pieces.filter((p) => !p.startsWith('<'))), { maxLength: 10 })
  .map((p) => p.join(' '));

describe('extractUrls, htmlToText and scanTags against test/reference', () => {
  it('answer the same on generated HTML', () => {
    fc.assert(
      fc.property(html, text, (h, t) => {
        expect(extractUrls({ body_html: h, body_text: t })).toEqual(
          legacyExtractUrls({ body_html: h, body_text: t }),
        );
        expect(extractUrls({ body_html: h, body_text: t }, { maxUrls: 3 })).toEqual(
          legacyExtractUrls({ body_html: h, body_text: t }, { maxUrls: 3 }),
        );
        expect(htmlToText(h)).toBe(legacyHtmlToText(h));
        expect([...scanTags(h)]).toEqual([...legacyScanTags(h)]);
      }),
      { numRuns: 3000 },
    );
  });

  it('answer the same on arbitrary strings of HTML characters', () => {
    const chars = fc.constantFrom(...'<>/="\' \t\nabAhref:srcimg&#;x.-'.split(''));
    fc.assert(
      fc.property(fc.array(chars, { maxLength: 200 }), (cs) => {
        const h = cs.join('');
        expect(extractUrls({ body_html: h })).toEqual(legacyExtractUrls({ body_html: h }));
        expect(htmlToText(h)).toBe(legacyHtmlToText(h));
        expect([...scanTags(h)]).toEqual([...legacyScanTags(h)]);
      }),
      { numRuns: 3000 },
    );
  });
});

import { describe, expect, it } from 'vitest';
import { scanTags, TagCursor } from '../../src/html-tags.ts';

const tags = (html: string) => [...scanTags(html)];

describe('scanTags', () => {
  it('yields names lower-case with their attribute text and bounds', () => {
    expect(tags('<P class=x>t</P >')).toEqual([
      { name: 'p', closing: false, attrs: ' class=x', start: 0, end: 11 },
      { name: 'p', closing: true, attrs: ' ', start: 12, end: 17 },
    ]);
  });

  it('does not end a tag at a `>` inside quotes', () => {
    expect(tags('<a href="x>y">t</a>').map((t) => [t.name, t.attrs])).toEqual([
      ['a', ' href="x>y"'],
      ['a', ''],
    ]);
    expect(tags(`<p title='it>s' class="a'b">`).map((t) => t.attrs)).toEqual([
      ` title='it>s' class="a'b"`,
    ]);
  });

  it('ends a tag with an unclosed quote at the first `>` after the quote', () => {
    expect(
      tags('<a title="never closed>x</a><b>').map((t) => [t.name, t.closing, t.attrs]),
    ).toEqual([
      ['a', false, ' title="never closed'],
      ['a', true, ''],
      ['b', false, ''],
    ]);
  });

  it('skips comments, doctype, processing instructions and `<` without a name', () => {
    expect(tags('<!--<a>--><!x><?p?><1>< b><A/>').map((t) => [t.name, t.attrs])).toEqual([
      ['a', '/'],
    ]);
  });

  it('stops at a tag without `>` and at an unterminated comment', () => {
    expect(tags('<p>x<a')).toHaveLength(1);
    expect(tags('<p>x<!-- <a href=y>')).toHaveLength(1);
  });

  it('cuts names at 64 characters', () => {
    const [t] = tags(`<${'n'.repeat(70)} x>`);
    expect(t?.name).toBe('n'.repeat(64));
    expect(t?.attrs).toBe('nnnnnn x');
  });

  it('ends a tag over 16 KB at its first `>`', () => {
    const html = `<img src="${'x'.repeat(20_000)}>y"><b>`;
    expect(tags(html).map((t) => [t.name, t.end])).toEqual([
      ['img', 20_011],
      ['b', html.length],
    ]);
  });

  it('is linear on hostile input', () => {
    const t0 = performance.now();
    expect(tags('<a title="'.repeat(50_000)).length).toBeLessThan(50_000);
    expect(tags(`${'<a '.repeat(100_000)}>`).length).toBeLessThanOrEqual(100_000);
    expect(tags('<a b=\'">'.repeat(50_000)).length).toBeGreaterThan(0);
    expect(performance.now() - t0).toBeLessThan(5000);
  });

  it('TagCursor walks the same tags without allocating them', () => {
    const html = '<div a="1"><br/><!-- c --></div>';
    const c = new TagCursor(html);
    const seen: unknown[] = [];
    while (c.next())
      seen.push({ name: c.name, closing: c.closing, attrs: c.attrs(), start: c.start, end: c.end });
    expect(seen).toEqual(tags(html));
    expect(c.next()).toBe(false);
  });
});

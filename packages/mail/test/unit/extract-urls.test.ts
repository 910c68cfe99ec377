import { describe, expect, it } from 'vitest';
import { domainInText, type ExtractedUrl, extractUrls } from '../../src/index.ts';

const html = (body_html: string) => extractUrls({ body_html });
const find = (list: ExtractedUrl[], pred: (u: ExtractedUrl) => boolean) => list.find(pred);

describe('extractUrls', () => {
  it('reads href with its anchor text and the domain shown in it', () => {
    const [u] = html(
      '<p>Log in at <a href="https://paypa1-secure.com/login?x=1&amp;y=2">www.paypal.com</a></p>',
    );
    expect(u).toMatchObject({
      url: 'https://paypa1-secure.com/login?x=1&y=2',
      scheme: 'https',
      host: 'paypa1-secure.com',
      registrableDomain: 'paypa1-secure.com',
      publicSuffix: 'com',
      isIp: false,
      source: 'href',
      anchorText: 'www.paypal.com',
      anchorDomain: 'www.paypal.com',
    });
    expect(u?.hidden).toBeUndefined();
  });

  it('marks a host disguised as written: %-escapes, an IPv4 address as one number or hex', () => {
    const obf = (href: string) => html(`<a href="${href}">x</a>`)[0]?.hostObfuscated === true;
    expect(obf('http://%77%77%77.example.test/a')).toBe(true);
    expect(obf('http://3512041827/login')).toBe(true);
    expect(obf('http://0xd1.0x55.0x2a.0x63/')).toBe(true);
    expect(obf('http://user@0321.0125.052.0143:8080/')).toBe(true);
    // written as it is parsed: not disguised
    expect(obf('http://209.85.42.99/login')).toBe(false);
    expect(obf('http://WWW.Example.test./a%20b?q=%41')).toBe(false);
    expect(obf('http://user@209.85.42.99:8080/')).toBe(false);
  });

  it('keeps a link whose written host holds control characters, marked disguised', () => {
    // `&#159;` and `&#156;` decode to C1 controls: no host name holds one, so the URL parser
    // refuses the link; the link still leads somewhere and its host was written to hide it
    const [u] = html('<a href="  http://x&#159;k2&#156;3c.example.test/r.php?a=1">x</a>');
    expect(u).toMatchObject({ host: 'xk23c.example.test', hostObfuscated: true });
    expect(html('<a href="http://exa\u0001mple.test/">x</a>')[0]?.hostObfuscated).toBe(true);
    // a link that does not parse for another reason is still left out
    expect(html('<a href="http://exa mple.test/">x</a>')).toEqual([]);
  });

  it('reads raw text elements as text: a style written inside noframes hides no link', () => {
    const list = html(
      '<noframes><xml><style></xml></noframes><a href="http://after.example.test/x">x</a>' +
        '<title><style></title><a href="http://second.example.test/">y</a><style>a{}</style>',
    );
    expect(list.map((u) => u.host)).toEqual(['after.example.test', 'second.example.test']);
  });

  it('a <link> element (a style sheet, an icon) is no link anyone clicks', () => {
    const [u] = html('<link rel="stylesheet" href="https://fonts.example.net/css">');
    expect(u).toMatchObject({ host: 'fonts.example.net', source: 'link', hidden: true });
  });

  it('anchor text that is not a domain gives no anchorDomain', () => {
    const [u] = html('<a href="http://example.com/a">Click here</a>');
    expect(u?.anchorText).toBe('Click here');
    expect(u?.anchorDomain).toBeUndefined();
  });

  it('reads src of img, iframe and script, marking images and tracking pixels', () => {
    const list = html(
      '<img src="https://cdn.example.com/logo.png" alt="Bank logo"><img src="http://t.example.net/p.gif" width="1" height="1"><iframe src="https://frame.example.org/"></iframe><script src="https://js.example.org/a.js"></script>',
    );
    expect(list.map((u) => u.source)).toEqual(['src', 'src', 'src', 'src']);
    expect(list[0]).toMatchObject({ isImage: true, anchorText: 'Bank logo' });
    expect(list[1]?.hidden).toBe(true);
    expect(list[2]?.host).toBe('frame.example.org');
    expect(list[3]?.host).toBe('js.example.org');
  });

  it('reads form action with method and password input', () => {
    const [u] = html(
      '<form action="https://collect.example.ru/post.php" method="POST"><input type="text" name="u"><input type=password name=p></form>',
    );
    expect(u).toMatchObject({
      source: 'form',
      host: 'collect.example.ru',
      formMethod: 'post',
      formHasPassword: true,
    });
    const [g] = html('<form><input name="q"></form>');
    expect(g).toMatchObject({ source: 'form', formMethod: 'get', url: 'about:blank' });
  });

  it('reads area, base, meta refresh and CSS url()', () => {
    const list = html(
      '<base href="https://base.example.com/dir/"><map><area href="https://area.example.com/x" alt="here"></map><meta http-equiv="refresh" content="0; url=https://refresh.example.com/"><div style="background-image: url(\'https://css.example.com/bg.jpg\')">x</div><style>.a{background:url(https://style.example.com/s.png)}</style><a href="relative/page">rel</a>',
    );
    expect(find(list, (u) => u.source === 'area')?.host).toBe('area.example.com');
    expect(find(list, (u) => u.source === 'meta')?.url).toBe('https://refresh.example.com/');
    expect(list.filter((u) => u.source === 'css').map((u) => u.host)).toEqual([
      'css.example.com',
      'style.example.com',
    ]);
    expect(find(list, (u) => u.anchorText === 'rel')?.url).toBe(
      'https://base.example.com/dir/relative/page',
    );
  });

  it('marks hidden links: display:none ancestors, zero font size, white on white, empty anchors', () => {
    const list = html(
      '<div style="display:none"><a href="https://hidden1.example.com/">a</a></div><a href="https://hidden2.example.com/" style="font-size:0">b</a><span style="color:#ffffff;background-color:#fff"><a href="https://hidden3.example.com/">c</a></span><a href="https://hidden4.example.com/"></a><a href="https://shown.example.com/">d</a>',
    );
    const hidden = Object.fromEntries(list.map((u) => [u.host, u.hidden === true]));
    expect(hidden).toEqual({
      'hidden1.example.com': true,
      'hidden2.example.com': true,
      'hidden3.example.com': true,
      'hidden4.example.com': true,
      'shown.example.com': false,
    });
  });

  it('marks image links', () => {
    const [u] = html(
      '<a href="https://img-link.example.com/"><img src="cid:button@x" alt="Verify now"></a>',
    );
    expect(u).toMatchObject({ isImage: true, anchorText: 'Verify now' });
  });

  it('handles IDN, IP, port, data: and javascript: URLs', () => {
    const list = html(
      '<a href="https://раураl.com/login">x</a><a href="http://192.168.10.5:8080/a">y</a><a href="data:text/html;base64,PHNjcmlwdD4=">z</a><a href="javascript:alert(1)">w</a>',
    );
    expect(list[0]?.host).toMatch(/^xn--[a-z0-9-]+\.com$/);
    expect(list[0]?.unicodeHost).toBe('раураl.com');
    expect(list[0]?.registrableDomain).toBe(list[0]?.host);
    expect(list[1]).toMatchObject({ host: '192.168.10.5', isIp: true, port: 8080 });
    expect(list[1]?.registrableDomain).toBeUndefined();
    expect(list[2]).toMatchObject({ scheme: 'data', host: '' });
    expect(list[3]).toMatchObject({ scheme: 'javascript', host: '' });
  });

  it('finds URLs and bare www. hosts in plain text, trims punctuation, dedups', () => {
    const list = extractUrls({
      body_text:
        'Go to https://bank.example.co.uk/verify. Or www.example.org/path, (see http://x.example.com/a) and again https://bank.example.co.uk/verify',
    });
    expect(list.map((u) => u.url)).toEqual([
      'https://bank.example.co.uk/verify',
      'http://www.example.org/path',
      'http://x.example.com/a',
    ]);
    expect(list[0]).toMatchObject({
      source: 'text',
      registrableDomain: 'example.co.uk',
      publicSuffix: 'co.uk',
    });
  });

  it('does not repeat text URLs already found in the HTML', () => {
    const list = extractUrls({
      body_text: 'https://a.example.com/',
      body_html: '<a href="https://a.example.com/">a</a>',
    });
    expect(list.length).toBe(1);
    expect(list[0]?.source).toBe('href');
  });

  it('is bounded in count and survives hostile HTML', () => {
    const many = Array.from(
      { length: 2000 },
      (_, i) => `<a href="https://h${i}.example.com/">${i}</a>`,
    ).join('');
    expect(html(many).length).toBe(500);
    expect(extractUrls({ body_html: many }, { maxUrls: 10 }).length).toBe(10);
    const hostile = `${'<a href="'.repeat(20_000)}${'<!--'.repeat(10_000)}<div style="${'x'.repeat(100_000)}`;
    expect(Array.isArray(html(hostile))).toBe(true);
  });

  it('domainInText finds a domain shown in text', () => {
    expect(domainInText('Sign in to https://login.microsoftonline.com/ now')).toBe(
      'login.microsoftonline.com',
    );
    expect(domainInText('paypal.com')).toBe('paypal.com');
    expect(domainInText('Click here')).toBeUndefined();
    expect(domainInText('file.exe')).toBeUndefined();
  });

  it('reads attribute values quoted, single-quoted, bare, spaced, any case; the first one wins', () => {
    const urls = (h: string) => html(h).map((u) => u.url);
    expect(urls("<a HREF='http://single.example.com/'>single</a>")).toEqual([
      'http://single.example.com/',
    ]);
    expect(urls('<a href = "http://spaced.example.com/" >spaced</a>')).toEqual([
      'http://spaced.example.com/',
    ]);
    expect(
      urls('<a href="http://first.example.com/" href="http://second.example.com/">first</a>'),
    ).toEqual(['http://first.example.com/']);
    expect(urls('<a title="x > y" href="http://gt.example.com/">quoted gt</a>')).toEqual([
      'http://gt.example.com/',
    ]);
    expect(urls('<a href="http://ent.example.com/?a=1&amp;b=&#50;">entities</a>')).toEqual([
      'http://ent.example.com/?a=1&b=2',
    ]);
    // a bare value ends at `=` or a backtick, as before
    expect(urls('<a href=http://bare.example.com/x?a=1>bare</a>')).toEqual([
      'http://bare.example.com/x?a',
    ]);
    expect(urls('<a href=http://tick.example.com/a`b>tick</a>')).toEqual([
      'http://tick.example.com/a',
    ]);
    // an unclosed quote gives no value
    expect(urls('<a href="http://unclosed.example.com/>unclosed quote</a>')).toEqual([]);
  });

  it('reads the anchor text of plain, spaced and image-only links', () => {
    const [zw] = html('<a href="http://zw.example.com/"> \u200bPay\u00a0&nbsp;Pal\u200c \n</a>');
    expect(zw?.anchorText).toBe('Pay Pal');
    const [alt] = html(
      '<a href="http://alt.example.com/"><img src="http://img.example.com/b.png" alt="Bank&amp;Co"></a>',
    );
    expect(alt).toMatchObject({ anchorText: 'Bank&Co', isImage: true });
    const [bg] = html(
      '<a href="http://bg.example.com/"><div style="background-image: url(x.png)"></div></a>',
    );
    expect(bg).toMatchObject({ isImage: true });
    expect(bg?.anchorText).toBeUndefined();
    expect(bg?.hidden).toBeUndefined();
    const [plainBg] = html('<a href="http://pbg.example.com/">background: url(x)</a>');
    expect(plainBg).toMatchObject({ anchorText: 'background: url(x)', isImage: true });
    const [long] = html(`<a href="http://long.example.com/">${'word '.repeat(100)}</a>`);
    expect(long?.anchorText?.length).toBe(200);
  });

  it('marks hidden links through spaced or upper-case styles and closes elements in order', () => {
    const hidden = (h: string) => html(h).map((u) => [u.host, u.hidden === true]);
    expect(
      hidden('<div style="DISPLAY : NONE"><a href="http://h1.example.com/">x</a></div>'),
    ).toEqual([['h1.example.com', true]]);
    expect(
      hidden(
        '<span style="color:#FFF; background-color: white"><a href="http://h2.example.com/">x</a></span>',
      ),
    ).toEqual([['h2.example.com', true]]);
    expect(
      hidden(
        '<div style="max-height:0;overflow:hidden"><a href="http://h4.example.com/">x</a></div>',
      ),
    ).toEqual([['h4.example.com', true]]);
    expect(
      hidden(
        '<div style="opacity:0.5"><a href="http://o.example.com/">x</a></div><p style="height:0"><a href="http://p.example.com/">y</a></p>',
      ),
    ).toEqual([
      ['o.example.com', false],
      ['p.example.com', false],
    ]);
    expect(
      hidden(
        '<div hidden><span><a href="http://h5.example.com/">x</a></div ><a href="http://h6.example.com/">after</a>',
      ),
    ).toEqual([
      ['h5.example.com', true],
      ['h6.example.com', false],
    ]);
    // a self-closed element (trailing white space aside) hides nothing after it
    expect(hidden('<div style="display:none"/ ><a href="http://sc.example.com/">x</a>')).toEqual([
      ['sc.example.com', false],
    ]);
    expect(
      hidden(
        '<input TYPE=hidden src="http://in.example.com/i.png"><td BACKGROUND="http://td.example.com/bg.jpg">',
      ),
    ).toEqual([
      ['in.example.com', true],
      ['td.example.com', false],
    ]);
  });

  it('skips the contents of textarea, xmp and script, and of an unclosed one to the end', () => {
    const hosts = (h: string) => html(h).map((u) => u.host);
    expect(
      hosts(
        '<textarea><a href="http://no.example.com/">x</a></textarea ><a href="http://yes.example.com/">y</a>',
      ),
    ).toEqual(['yes.example.com']);
    expect(hosts('<script/><a href="http://after.example.com/">y</a>')).toEqual([
      'after.example.com',
    ]);
    expect(hosts('<xmp><a href="http://never.example.com/">y</a>')).toEqual([]);
  });

  it('stays fast on long attribute values and many attributes', () => {
    const t0 = performance.now();
    const big = `<img src="data:image/png;base64,${'A'.repeat(1_000_000)}"><a href="http://after.example.com/">x</a>`;
    const list = html(big);
    expect(list.map((u) => u.scheme)).toEqual(['data', 'http']);
    expect(list[0]?.url.length).toBe(2048);
    const many = `<div ${'a=b '.repeat(200_000)}><a href=http://many.example.com/>m</a>`;
    expect(html(many).map((u) => u.host)).toEqual(['many.example.com']);
    const bare = `<a href=${'x'.repeat(500_000)}>y</a>`;
    expect(html(bare)).toEqual([]);
    expect(performance.now() - t0).toBeLessThan(5000);
  });

  it('resolves relative links against the base in force where they appear', () => {
    const list = html(
      '<a href="/x">1</a><base href="http://b.example.com/"><a href="/x">2</a><base href="http://c.example.com/d/"><a href="/x">3</a><a href="y">4</a><base href="::bad"><a href="y">5</a>',
    );
    expect(list.map((u) => [u.url, u.anchorText ?? null, u.hidden ?? null])).toEqual([
      ['http://b.example.com/', null, true],
      ['http://b.example.com/x', '2', null],
      ['http://c.example.com/d/', null, true],
      ['http://c.example.com/x', '3', null],
      ['http://c.example.com/d/y', '4', null],
      ['http://c.example.com/d/::bad', null, true],
    ]);
  });

  it('extracts once per message: copies that share the headers share the list, other bodies do not', () => {
    const headers = {};
    const a = { headers, body_html: '<a href="https://one.example/x">go</a>' };
    const copy = { ...a, analysis_context: {} };
    const first = extractUrls(a);
    const again = extractUrls(copy);
    expect(again).toEqual(first);
    // the entries are the cached ones (same objects), the list a copy
    expect(again[0]).toBe(first[0]);
    expect(again).not.toBe(first);
    // the same headers with another body (never made by Trawl, but possible) are read again
    const changed = { headers, body_html: '<a href="https://two.example/y">go</a>' };
    expect(extractUrls(changed).map((u) => u.host)).toEqual(['two.example']);
    expect(extractUrls(copy).map((u) => u.host)).toEqual(['one.example']);
  });
});

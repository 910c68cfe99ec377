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
});

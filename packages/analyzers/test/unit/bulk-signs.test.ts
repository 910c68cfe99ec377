import { describe, expect, it } from 'vitest';
import {
  addressInSubject,
  brokenWords,
  fakeReply,
  generatedLocalPart,
  generatedSubdomain,
  institutionOffDomain,
  junkSuffix,
  malformedDisplayName,
  unrelatedOrgName,
} from '../../src/headers/bulk-signs.ts';
import { analyzeHeaders, HeadersSettings } from '../../src/headers/index.ts';
import { makeEmail } from '../fixtures/emails.ts';

const settings = HeadersSettings.parse({});
const symbols = (e: ReturnType<typeof makeEmail>) =>
  (analyzeHeaders(e, settings).analyzer_details?.symbols as string[]) ?? [];

describe('bulk-mail signs in From and Subject', () => {
  it('junkSuffix finds tokens appended to defeat matching', () => {
    expect(junkSuffix('Profiteer van subsidies voor isolatie!.BVUM')).toBe('.BVUM');
    expect(junkSuffix('Nationaal Energie Collectief .BOLFR')).toBe('.BOLFR');
    expect(junkSuffix('Beneficio Liberado - vKsJR5Dcnny')).toBe('vKsJR5Dcnny');
    expect(junkSuffix('Saldo Disponível-4VFyNHiOuFn3dIsgSRG')).toBe('4VFyNHiOuFn3dIsgSRG');
    expect(junkSuffix('Ticket #A1B2C3D4E5 updated')).toBeUndefined();
    expect(junkSuffix('Reminder: 14 dec  ttqmk.feqvm.slsbs.yjgkv')).toBe('ttqmk.feqvm.slsbs.yjgkv');
  });
  it('junkSuffix leaves ordinary subjects alone', () => {
    for (const s of [
      'Re: Build fails on ASP.NET',
      'Minutes of Tuesday',
      'Visit www.example.com today',
      'Ticket #12345 updated',
      'NYTimes.com Article: Why We Are Nice',
      'Release 2.4.1 of SpamAssassin',
      'iPhone15Pro review',
    ])
      expect(junkSuffix(s)).toBeUndefined();
  });

  it('malformedDisplayName finds stuffed names, not ordinary ones', () => {
    expect(malformedDisplayName('"Gemeentelijk*Energieadvies"      AI')).toBeDefined();
    expect(malformedDisplayName('Temu, <laredoute@fr.redoute.com.>,')).toBeDefined();
    expect(malformedDisplayName('Dating-Experte,(')).toBeDefined();
    expect(malformedDisplayName('NEW MESSAGE (1)')).toBeDefined();
    expect(malformedDisplayName('Itaucard - Voce tem pontos 8787425581733')).toBeDefined();
    for (const n of [
      'Alice Example',
      'Smith, John',
      "O'Brien (IT)",
      'CNET News.com Daily Dispatch',
    ])
      expect(malformedDisplayName(n)).toBeUndefined();
  });

  it('brokenWords finds words cut up by spaces or dots', () => {
    expect(brokenWords('L etzte B enachrichtigung – Z ustellung Ihres P a kets')).toBe(true);
    expect(brokenWords('Wij hebben geprobeerd u..te bereiken')).toBe(true);
    expect(brokenWords('A quick note: I have the minutes of Tuesday')).toBe(false);
    expect(brokenWords('Re: the A B C of RPM... packaging')).toBe(false);
  });

  it('a brand spelled with look-alike characters, not the brand written normally', () => {
    for (const [subject, hit] of [
      ['[ lRS : Report ] - Your refund is ready', true],
      ['Your PayPaI account is limited', true],
      ['Amaz0n order 113-2234 on hold', true],
      ['IRS notice: your refund', false],
      ['Your PayPal receipt', false],
      ['Connect on LinkedIn', false],
      ['Mr McIntosh sends his regards', false],
      ['LNG prices rose 4% this week', false],
    ] as const)
      expect(symbols(makeEmail({ subject })).includes('disguised_brand'), subject).toBe(hit);
  });

  it('brokenWords finds words joined by underscores, not identifiers or file names', () => {
    expect(brokenWords('_hurry_up_!_Rewards_have_arrived!_')).toBe(true);
    expect(brokenWords('Get_it_urgently_0.7495_BTC')).toBe(true);
    expect(brokenWords('Re: __builtin_types_compatible_p() is too accepting')).toBe(false);
    expect(brokenWords('scan_0001_invoice_march.pdf')).toBe(false);
    expect(brokenWords('usrp_x310')).toBe(false);
  });

  it('fakeReply needs a reply prefix without In-Reply-To or References', () => {
    expect(fakeReply('RE: 2nd attempt for you', ['from', 'to', 'subject'])).toBe(true);
    expect(fakeReply('Re: minutes', ['from', 'in-reply-to'])).toBe(false);
    expect(fakeReply('Re: minutes', ['from', 'references'])).toBe(false);
    expect(fakeReply('Report for May', ['from'])).toBe(false);
  });

  it('unrelatedOrgName: an organisation name on a role address that is not its own', () => {
    expect(unrelatedOrgName('Endurance Auto Warranty', 'njifv.info@zhishangmingzhan.com')).toBe(
      false, // not a role mailbox
    );
    expect(unrelatedOrgName('National Solar Incentives', 'renew@zhishangmingzhan.com')).toBe(true);
    expect(unrelatedOrgName('The Motley Fool', 'fool@motleyfool.com')).toBe(false);
    expect(unrelatedOrgName('Lockergnome Windows Daily', 'subscriptions@lockergnome.com')).toBe(
      false,
    );
    expect(unrelatedOrgName('Alice Example', 'alice@example.org')).toBe(false);
    expect(unrelatedOrgName('Support', 'info@unrelated.test')).toBe(false); // one word
  });

  it('unrelatedOrgName: a name its domain shortens (initials, a short word, an umlaut written out)', () => {
    expect(unrelatedOrgName('Banque Populaire du Lac', 'notifications@bp-du-lac.fr')).toBe(false);
    expect(unrelatedOrgName('Deutsche Kreditbank AG', 'info@dkb.de')).toBe(false);
    expect(unrelatedOrgName('Kreissparkasse Köln', 'service@ksk-koeln.de')).toBe(false);
    expect(unrelatedOrgName('Banque Populaire du Lac', 'notifications@secure-notice.com')).toBe(
      true,
    );
    expect(unrelatedOrgName('Kreissparkasse Köln', 'service@lac-notice.de')).toBe(true);
  });

  it('institutionOffDomain: letters NFKD keeps whole are read as domains write them', () => {
    expect(institutionOffDomain('Bank Przykładowy', 'bankprzykladowy.pl')).toBeUndefined();
    expect(institutionOffDomain('Sparebanken Møre', 'sparebankenmore.no')).toBeUndefined();
    expect(institutionOffDomain('Bank Przykładowy', 'secure-notice.pl')).toBe('Bank Przykładowy');
  });

  it('unrelatedOrgName: also an organisation name on a random-case mailbox', () => {
    expect(unrelatedOrgName('Home Warranty Plans', 'snytvkoqu@deck.example.test', true)).toBe(true);
    expect(unrelatedOrgName('Home Warranty Plans', 'snytvkoqu@deck.example.test')).toBe(false);
    expect(unrelatedOrgName('Home Warranty Plans', 'xq@homewarranty.example.test', true)).toBe(
      false,
    );
  });

  it('generatedLocalPart and generatedSubdomain', () => {
    expect(generatedLocalPart('new_offre_1_89227@x.test')).toBe(true);
    expect(generatedLocalPart('migo0003-----r172@x.test')).toBe(true);
    expect(generatedLocalPart('john.smith@x.test')).toBe(false);
    expect(generatedLocalPart('fork-admin@xent.com')).toBe(false);
    // letters in a random mix of cases, as a generator draws them
    for (const a of ['SNYTVKOqu@x.test', 'uJrkoOT@x.test', 'elXmWLz@x.test', 'NFbUjQzpv@x.test'])
      expect(generatedLocalPart(a), a).toBe(true);
    // the ways people write their names
    for (const a of ['JohnSmith@x.test', 'jsmith@x.test', 'JSMITH@x.test', 'Bob42@x.test'])
      expect(generatedLocalPart(a), a).toBe(false);
    expect(generatedSubdomain('gnrpm.8inkdjmmst.edu.info', 'edu.info')).toBe('8inkdjmmst');
    expect(generatedSubdomain('qfskkp.domsmooth81.com', 'domsmooth81.com')).toBe('qfskkp');
    expect(generatedSubdomain('mail98.atl231.mcsv.net', 'mcsv.net')).toBeUndefined();
    expect(generatedSubdomain('lists.sourceforge.net', 'sourceforge.net')).toBeUndefined();
    expect(generatedSubdomain('em6262.example.com', 'example.com')).toBeUndefined();
  });

  it('reads the case of the From local part as written (the view lower-cases it)', () => {
    const e = makeEmail({ from: '"Home Warranty" <SNYTVKOqu@deck.example.test>' });
    expect(symbols(e)).toContain('generated_local_part');
    expect(symbols(makeEmail({ from: '"Bob" <bob.smith@example.test>' }))).not.toContain(
      'generated_local_part',
    );
  });

  it('addressInSubject ignores the sender’s own address', () => {
    expect(addressInSubject('bob@example.net, zero-cost solar panels', 'x@y.test')).toBe(true);
    expect(addressInSubject('mail from alice@example.org', 'alice@example.org')).toBe(false);
    expect(addressInSubject('Minutes of Tuesday', 'alice@example.org')).toBe(false);
  });

  it('the headers analyzer reports them as symbols and indicators', () => {
    const e = makeEmail({
      from: '"Nationaal Energie"   AI <renew@zhishangmingzhan.test>',
      subject: 'RE: carol@example.com, bespaar nu!.BVUM',
    });
    const s = symbols(e);
    for (const x of [
      'junk_suffix',
      'display_name_malformed',
      'fake_reply',
      'address_in_subject',
      'unrelated_org_name',
    ])
      expect(s).toContain(x);
  });

  it('an ordinary message raises none of them', () => {
    const e = makeEmail({
      from: 'Alice Example <alice@example.org>',
      subject: 'Re: Minutes of Tuesday',
      headers: { 'in-reply-to': '<x@example.org>' },
    });
    expect(symbols(e)).toEqual([]);
  });

  it('mail of a list whose own domain signed it is exempt from fake_reply and unrelated_org_name', () => {
    const e = makeEmail({
      from: 'Tech News Weekly <news@lists.example.com>',
      subject: 'Re: Tech news',
      headers: {
        received: 'from lists.example.net by mx.example.org (Postfix)',
        'authentication-results':
          'mx.example.org; dkim=pass header.d=example.net; spf=pass smtp.mailfrom=example.net',
        'list-id': '<talk.example.net>',
      },
    });
    expect(symbols(e)).not.toContain('fake_reply');
    expect(symbols(e)).not.toContain('unrelated_org_name');
  });

  it('a List-Id nobody authenticated exempts nothing (anyone can write one)', () => {
    const e = makeEmail({
      from: 'Tech News Weekly <news@lists.example.com>',
      subject: 'Re: Tech news',
      headers: { 'list-id': '<talk.example.net>' },
    });
    expect(symbols(e)).toContain('fake_reply');
  });
});

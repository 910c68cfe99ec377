import type { Email } from '@trawl/contracts';
import { invokeAnalyzer } from '@trawl/plugin-sdk';
import { describe, expect, it } from 'vitest';
import {
  analyzeContext,
  ContextSettings,
  contextAnalyzer,
  findInternalLookalike,
  requestLanguage,
} from '../../src/context/index.ts';
import { mail } from './context-helpers.ts';

const settings = ContextSettings.parse({});

const directory = (over: Record<string, unknown> = {}) => ({
  configured: true,
  sender_internal: false,
  sender_partner: false,
  internal_domains: ['example.org'],
  partner_domains: ['partner.example.net'],
  recipient_vips: [],
  display_name_matches_person: { matched: false, display_name: '' },
  ...over,
});

const history = (over: Record<string, unknown> = {}) => ({
  available: true,
  address: 'x',
  domain: 'y',
  sender: {
    known: false,
    first_seen: null,
    last_seen: null,
    message_count: 0,
    phishing_count: 0,
    days_known: null,
  },
  domain_history: {
    known: false,
    first_seen: null,
    last_seen: null,
    message_count: 0,
    phishing_count: 0,
    days_known: null,
  },
  first_time_sender: true,
  first_time_domain: true,
  ...over,
});

const types = (e: Email) => analyzeContext(e, settings).indicators?.map((i) => i.type) ?? [];

describe('context analyzer', () => {
  it('raises vip_impersonation for an external sender using a VIP name', () => {
    const e = mail({
      sender: 'alice.example.ceo@freemail.example',
      displayName: 'Alice Example',
      providers: {
        directory: directory({
          display_name_matches_person: {
            matched: true,
            display_name: 'Alice Example',
            name: 'Alice Example',
            email: 'alice.example@example.org',
            title: 'CEO',
            vip: true,
            same_address: false,
          },
        }),
      },
    });
    const a = analyzeContext(e, settings);
    expect(a.is_phishing).toBe(true);
    expect(a.indicators?.[0]).toMatchObject({ type: 'vip_impersonation', confidence: 0.9 });
    expect(a.indicators?.[0]?.value).toContain('VIP Alice Example (CEO)');
  });

  it('does not flag the person writing from their own address', () => {
    const e = mail({
      sender: 'alice.example@example.org',
      providers: {
        directory: directory({
          sender_internal: true,
          display_name_matches_person: {
            matched: true,
            display_name: 'Alice Example',
            vip: true,
            same_address: true,
          },
        }),
      },
    });
    expect(types(e)).toEqual([]);
    expect(analyzeContext(e, settings).is_phishing).toBe(false);
  });

  it('raises first_time_sender only with payment or credential language', () => {
    const pay = mail({
      sender: 'billing@new-vendor.example',
      subject: 'Updated bank details',
      body: 'Please send the wire transfer to our new IBAN today.',
      providers: { 'sender-history': history() },
    });
    const a = analyzeContext(pay, settings);
    expect(a.indicators?.map((i) => i.type)).toEqual(['first_time_sender']);
    expect(a.indicators?.[0]?.value).toContain('payment (');
    expect(a.is_phishing).toBe(true);
    const de = mail({
      sender: 'it@new.example',
      subject: 'Konto',
      body: 'Bitte bestätigen Sie Ihr Passwort.',
      providers: { 'sender-history': history({ first_time_domain: false }) },
    });
    expect(analyzeContext(de, settings).indicators?.[0]).toMatchObject({
      type: 'first_time_sender',
      confidence: 0.7,
    });
    const chat = mail({
      sender: 'friend@new.example',
      body: 'Lunch on Friday?',
      providers: { 'sender-history': history() },
    });
    expect(types(chat)).toEqual([]);
    const known = mail({
      sender: 'billing@vendor.example',
      body: 'Invoice payment due, wire transfer details attached.',
      providers: {
        'sender-history': history({
          first_time_sender: false,
          first_time_domain: false,
          sender: {
            known: true,
            message_count: 12,
            phishing_count: 0,
            first_seen: '2023-01-01T00:00:00Z',
            days_known: 480,
          },
        }),
      },
    });
    expect(types(known)).toEqual([]);
    expect(analyzeContext(known, settings).confidence).toBe(0.9);
  });

  it('raises internal_domain_lookalike for look-alikes of internal domains', () => {
    for (const sender of [
      'ceo@examp1e.org',
      'ceo@exampel.org',
      'ceo@example.com',
      'ceo@example-payroll.com',
      'ceo@example.org.evil.net',
    ]) {
      expect(types(mail({ sender, providers: { directory: directory() } })), sender).toEqual([
        'internal_domain_lookalike',
      ]);
    }
    for (const sender of [
      'a@example.org',
      'a@mail.example.org',
      'a@partner.example.net',
      'a@other.org',
    ]) {
      expect(types(mail({ sender, providers: { directory: directory() } })), sender).toEqual([]);
    }
  });

  it('uses internal_domains from its settings when no directory ran', () => {
    const s = ContextSettings.parse({ internal_domains: ['acme-corp.com'] });
    const a = analyzeContext(mail({ sender: 'it@acme-c0rp.com' }), s);
    expect(a.indicators?.[0]).toMatchObject({ type: 'internal_domain_lookalike', confidence: 0.9 });
  });

  it('reports senders with past phishing verdicts', () => {
    const e = mail({
      sender: 'x@bad.example',
      providers: {
        'sender-history': history({
          first_time_sender: false,
          sender: {
            known: true,
            message_count: 3,
            phishing_count: 2,
            first_seen: null,
            days_known: null,
          },
        }),
      },
    });
    expect(analyzeContext(e, settings).indicators?.[0]).toMatchObject({
      type: 'known_phishing_sender',
      confidence: 0.8,
    });
  });

  it('stays neutral without provider data, and reports malformed data', async () => {
    const a = await invokeAnalyzer(
      contextAnalyzer,
      mail({ sender: 'a@b.example' }),
      {},
      AbortSignal.timeout(5000),
    );
    expect(a).toMatchObject({ is_phishing: false, confidence: 0.5, indicators: [] });
    const bad = analyzeContext(
      mail({ sender: 'a@b.example', providers: { directory: { sender_internal: 'yes' } } }),
      settings,
    );
    expect(bad.analyzer_details?.problems).toEqual(['enrich.providers.directory is malformed']);
  });

  it('finds request language in six languages', () => {
    expect(requestLanguage('Rechnung', 'Bitte Überweisung heute').payment).toContain('uberweisung');
    expect(requestLanguage('', 'Confirme sua senha').credential).toContain('senha');
    expect(requestLanguage('', 'Uw wachtwoord verloopt').credential).toContain('wachtwoord');
    expect(requestLanguage('', 'Merci de régler la facture impayée').payment).toContain(
      'facture impayee',
    );
    expect(requestLanguage('', 'Necesitamos su contraseña').credential).toContain('contrasena');
    expect(requestLanguage('', '', '<p>Buy a <b>gift card</b></p>').payment).toContain('gift card');
    expect(requestLanguage('Team lunch', 'See you at noon')).toEqual({
      payment: [],
      credential: [],
    });
  });

  it('findInternalLookalike ignores exact domains and short names', () => {
    expect(findInternalLookalike('example.org', ['example.org'])).toBeUndefined();
    expect(findInternalLookalike('ab.org', ['ac.org'])).toBeUndefined();
    expect(findInternalLookalike('xn--exmple-cua.org', ['example.org'])?.how).toBe('homoglyph');
  });
});

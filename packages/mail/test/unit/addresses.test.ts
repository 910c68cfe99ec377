import { describe, expect, it } from 'vitest';
import {
  domainOfAddress,
  normalizeAddress,
  parseMailDate,
  registrableDomain,
} from '../../src/index.ts';

describe('addresses and domains', () => {
  it('normalizeAddress', () => {
    expect(normalizeAddress('<Bob@Example.COM>')).toEqual({
      address: 'Bob@example.com',
      lossy: false,
    });
    expect(normalizeAddress('"john doe"@example.com')).toEqual({
      address: 'john_doe@example.com',
      lossy: true,
    });
    expect(normalizeAddress('user@bücher.de')?.address).toBe('user@xn--bcher-kva.de');
    expect(normalizeAddress('x@pot')?.address).toBe('x@pot.invalid');
    expect(normalizeAddress('x@[10.0.0.1]')?.address).toBe('x@10.0.0.1.invalid');
    expect(normalizeAddress('no-at-sign')).toBeUndefined();
    expect(normalizeAddress('a@')).toBeUndefined();
    expect(normalizeAddress('a@b..c')).toBeUndefined();
  });
  it('domainOfAddress and registrableDomain', () => {
    expect(domainOfAddress('Alice <alice@Mail.Example.co.uk>')).toBe('mail.example.co.uk');
    expect(domainOfAddress('nobody')).toBeUndefined();
    expect(registrableDomain('alice@mail.example.co.uk')).toBe('example.co.uk');
    expect(registrableDomain('login.secure.paypal.com.evil.xyz')).toBe('evil.xyz');
    expect(registrableDomain('münchen.de')).toBe('xn--mnchen-3ya.de');
    expect(registrableDomain('192.168.0.1')).toBeUndefined();
    expect(registrableDomain('co.uk')).toBeUndefined();
  });
  it('parseMailDate', () => {
    expect(parseMailDate('Tue, 14 May 2024 09:30:00 +0200')).toBe('2024-05-14T07:30:00.000Z');
    expect(parseMailDate('Tue, 14 May 2024 09:30:00 +0200 (CEST)')).toBe(
      '2024-05-14T07:30:00.000Z',
    );
    expect(parseMailDate('Tue, 14 May 2024 09:30:00 +0200 CEST')).toBe('2024-05-14T07:30:00.000Z');
    expect(parseMailDate('not a date')).toBeUndefined();
    expect(parseMailDate('Mon, 1 Jan 1900 00:00:00 +0000')).toBeUndefined();
  });
  it('parseMailDate reads the broken spellings seen in real mail', () => {
    // dots in the time, a day name without comma, an unknown zone name, too few digits
    expect(parseMailDate('Tue, 14 May 2024 09.30.00 +0200')).toBe('2024-05-14T07:30:00.000Z');
    expect(parseMailDate('Tuesday 14 May 2024 09:30:00 +0200')).toBe('2024-05-14T07:30:00.000Z');
    expect(parseMailDate('14 May 2024 09:30:00 XYZ')).toBe('2024-05-14T09:30:00.000Z');
    expect(parseMailDate('x 123')).toBeUndefined();
  });
});

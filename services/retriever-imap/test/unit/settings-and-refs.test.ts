import { describe, expect, it } from 'vitest';
import { formatRef, imapSettingsFromEnv, parseRef } from '../../src/index.ts';

describe('message refs', () => {
  it('round-trip uidvalidity, uid and Message-ID', () => {
    const id = formatRef({ uidValidity: '1795318529', uid: 42, messageId: '<a.b@c>' });
    expect(parseRef(id)).toEqual({ uidValidity: '1795318529', uid: 42, messageId: '<a.b@c>' });
    expect(parseRef(formatRef({ uidValidity: '7', uid: 1 }))).toEqual({ uidValidity: '7', uid: 1 });
  });
  it('leave out a Message-ID too long for an id, and refuse malformed ids', () => {
    expect(formatRef({ uidValidity: '1', uid: 2, messageId: 'x'.repeat(2000) })).toBe('1.2');
    for (const bad of ['', 'abc', '1.0', '1.2.!!', '1', '-1.2']) expect(parseRef(bad)).toBeNull();
  });
});

describe('settings from TRAWL_IMAP_*', () => {
  it('fill defaults (TLS on 993, INBOX, Trawl/Processed, Trawl/Quarantine)', () => {
    const r = imapSettingsFromEnv({
      TRAWL_IMAP_HOST: 'imap.example.org',
      TRAWL_IMAP_USER: 'abuse@example.org',
      TRAWL_IMAP_PASSWORD: 'secret',
    });
    expect(r.ok && r.value).toMatchObject({
      port: 993,
      secure: true,
      mailbox: 'INBOX',
      processed_folder: 'Trawl/Processed',
      quarantine_folder: 'Trawl/Quarantine',
      hold_folder: 'Trawl/Unanalyzed',
      address: 'abuse@example.org', // the user, as it is an address: the envelope recipient
    });
    const plain = imapSettingsFromEnv({
      TRAWL_IMAP_HOST: 'h',
      TRAWL_IMAP_USER: 'u',
      TRAWL_IMAP_PASSWORD: 'p',
      TRAWL_IMAP_SECURE: 'false',
    });
    expect(plain.ok && plain.value.port).toBe(143);
    expect(plain.ok && plain.value.address).toBeUndefined(); // 'u' is no address
    const named = imapSettingsFromEnv({
      TRAWL_IMAP_HOST: 'h',
      TRAWL_IMAP_USER: 'u',
      TRAWL_IMAP_PASSWORD: 'p',
      TRAWL_IMAP_ADDRESS: 'phish-report@example.org',
      TRAWL_IMAP_HOLD_FOLDER: 'Held',
    });
    expect(named.ok && named.value).toMatchObject({
      address: 'phish-report@example.org',
      hold_folder: 'Held',
    });
    const bad = imapSettingsFromEnv({
      TRAWL_IMAP_HOST: 'h',
      TRAWL_IMAP_USER: 'u',
      TRAWL_IMAP_PASSWORD: 'p',
      TRAWL_IMAP_ADDRESS: 'Reports <r@example.org>',
    });
    expect(bad.ok ? '' : bad.problems.join('\n')).toContain('TRAWL_IMAP_ADDRESS');
  });
  it('name the variable that is missing or wrong, never its value', () => {
    const r = imapSettingsFromEnv({ TRAWL_IMAP_PORT: 'abc', TRAWL_IMAP_PASSWORD: 'hunter2' });
    expect(r.ok).toBe(false);
    const text = r.ok ? '' : r.problems.join('\n');
    expect(text).toContain('TRAWL_IMAP_HOST');
    expect(text).toContain('TRAWL_IMAP_USER');
    expect(text).toContain('TRAWL_IMAP_PORT');
    expect(text).not.toContain('hunter2');
  });
});

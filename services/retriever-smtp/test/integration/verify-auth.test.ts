/**
 * Issue 32, "inline as a complete filter": Trawl's own SPF, DKIM, DMARC and ARC check
 * (verifyAuthentication) against a DNS server this test starts (RFC 1035 over UDP and TCP, on
 * 127.0.0.1), with messages signed by a key generated here, through node's resolver bounded by
 * createDnsResolver.
 */
import { createSocket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authservIdOf,
  claimsAuthservId,
  createDnsResolver,
  verifyAuthentication,
} from '../../src/index.ts';
import { startTestDns, type TestDnsServer } from '../../src/testing/index.ts';
import { message, type SendingDomain, sendingDomain } from '../helpers/signed-mail.ts';

const ID = 'mx.trawl.test';

describe('verifyAuthentication against a local DNS server', () => {
  let dns: TestDnsServer;
  let sender: SendingDomain;
  let bigKey: SendingDomain;
  let resolver: ReturnType<typeof createDnsResolver>;

  beforeAll(async () => {
    sender = sendingDomain('sender.test');
    // a 4096-bit key: its DKIM record does not fit a 512-byte UDP answer (TCP fallback)
    bigKey = sendingDomain('bigkey.test', { bits: 4096 });
    dns = await startTestDns({
      ...sender.zone,
      ...bigKey.zone,
      'bank.test': { TXT: [['v=spf1 -all']] },
      '_dmarc.bank.test': { TXT: [['v=DMARC1; p=reject']] },
      'many.test': { TXT: Array.from({ length: 80 }, (_, i) => [`filler-${i}`]) },
      '_dmarc.many.test': { TXT: [['v=DMARC1; p=none']] },
    });
    resolver = createDnsResolver({
      servers: [dns.address],
      timeoutMs: 1000,
      tries: 1,
      maxRecords: 50,
      maxTxtChars: 16 * 1024,
    });
  });

  afterAll(async () => {
    await dns?.close();
  });

  const verify = (raw: string, o: { ip?: string; from?: string } = {}) =>
    verifyAuthentication({
      raw: Buffer.from(raw),
      clientIp: o.ip ?? '127.0.0.1',
      helo: 'mail.sender.test',
      mailFrom: o.from ?? 'alice@sender.test',
      authservId: ID,
      resolver,
      timeoutMs: 10_000,
    });

  it('a signed message from an allowed address passes SPF, DKIM and DMARC', async () => {
    const raw = await sender.sign(
      message({ from: 'Alice <alice@sender.test>', subject: 'hi', id: 'a1@sender.test' }),
    );
    const v = await verify(raw);
    expect(v.result.spf).toEqual({ result: 'pass', domain: 'sender.test' });
    expect(v.result.dkim).toEqual([
      { result: 'pass', domain: 'sender.test', selector: 's1', aligned: true },
    ]);
    expect(v.result.dmarc).toMatchObject({
      result: 'pass',
      domain: 'sender.test',
      policy: 'reject',
    });
    expect(v.header.name).toBe('Authentication-Results');
    expect(v.header.value.startsWith(`${ID};`)).toBe(true);
    expect(v.header.value).toMatch(/dkim=pass header\.i=@sender\.test header\.s=s1/);
    expect(v.header.value).toMatch(/spf=pass .*smtp\.mailfrom=(alice@)?sender\.test/);
    expect(v.header.value).toMatch(/dmarc=pass .*header\.from=sender\.test/);
    expect(v.timedOut).toBe(false);
  });

  it('from an address SPF does not allow: SPF fails, the aligned DKIM signature carries DMARC', async () => {
    const raw = await sender.sign(
      message({ from: 'alice@sender.test', subject: 'x', id: 'a2@sender.test' }),
    );
    const v = await verify(raw, { ip: '198.51.100.7' });
    expect(v.result.spf.result).toBe('fail');
    expect(v.result.dkim[0]?.result).toBe('pass');
    expect(v.result.dmarc.result).toBe('pass');
  });

  it('a forged bank sender: no signature, SPF not aligned, DMARC fails (p=reject)', async () => {
    const raw = message({ from: 'Bank <security@bank.test>', subject: 'locked', id: 'f1@x.test' });
    const v = await verify(raw, { from: 'bounce@sender.test' });
    expect(v.result.spf.result).toBe('pass'); // for sender.test, which is not bank.test
    expect(v.result.dkim).toEqual([]);
    expect(v.result.dmarc).toMatchObject({ result: 'fail', domain: 'bank.test', policy: 'reject' });
    expect(v.header.value).toMatch(/dmarc=fail/);
  });

  it('a body changed after signing fails DKIM', async () => {
    const raw = (
      await sender.sign(message({ from: 'alice@sender.test', subject: 's', id: 'b@s.test' }))
    ).replace('minutes of the meeting', 'bank details for the payment');
    const v = await verify(raw, { ip: '198.51.100.7' });
    // mailauth reports a body hash that does not match as neutral (RFC 6376 6.3 permits either)
    expect(['fail', 'neutral']).toContain(v.result.dkim[0]?.result);
    expect(v.header.value).toMatch(/body hash did not verify/);
    expect(v.result.dmarc.result).toBe('fail');
  });

  it('a DKIM key too large for UDP is read over TCP (truncated answer, RFC 1035 4.2.2)', async () => {
    const raw = await bigKey.sign(
      message({ from: 'carol@bigkey.test', subject: 'k', id: 'k@bigkey.test' }),
    );
    const before = dns.queries();
    const v = await verify(raw, { from: 'carol@bigkey.test', ip: '198.51.100.7' });
    expect(v.result.dkim[0]).toMatchObject({ result: 'pass', domain: 'bigkey.test' });
    expect(dns.queries() - before).toBeGreaterThan(2);
  });

  it('an answer over the resolver’s bounds is a temporary error, not a read without end', async () => {
    const v = await verify(message({ from: 'x@many.test', subject: 'm', id: 'm@many.test' }), {
      from: 'x@many.test',
    });
    expect(v.result.spf.result).toBe('temperror');
  });

  it('a DNS server that never answers makes each method temperror within the deadline', async () => {
    // a UDP socket that reads queries and answers none
    const mute = createSocket('udp4');
    await new Promise<void>((r) => mute.bind(0, '127.0.0.1', r));
    const port = mute.address().port;
    try {
      const slow = createDnsResolver({
        servers: [`127.0.0.1:${port}`],
        timeoutMs: 200,
        tries: 1,
        maxRecords: 50,
        maxTxtChars: 16 * 1024,
      });
      const started = Date.now();
      const v = await verifyAuthentication({
        raw: Buffer.from(
          await sender.sign(message({ from: 'alice@sender.test', subject: 't', id: 't@s.test' })),
        ),
        clientIp: '127.0.0.1',
        helo: 'mail.sender.test',
        mailFrom: 'alice@sender.test',
        authservId: ID,
        resolver: slow,
        timeoutMs: 1500,
      });
      expect(v.result.spf.result).toBe('temperror');
      expect(v.result.dkim[0]?.result).toBe('temperror');
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      mute.close();
    }
  });

  it('names the Authentication-Results fields that forge its authserv-id (RFC 8601 section 5)', async () => {
    const raw = message({
      from: 'alice@sender.test',
      subject: 'f',
      id: 'forged@s.test',
      extra: [
        `Authentication-Results: ${ID.toUpperCase()}; dkim=pass; spf=pass; dmarc=pass`,
        'Authentication-Results: mx.other.example; spf=fail',
        `Authentication-Results: (a comment) ${ID} 1;`,
        '\tdmarc=pass header.from=bank.test',
      ],
    });
    const v = await verify(raw);
    expect(v.forged).toEqual([1, 3]);
    expect(authservIdOf(' (c (nested)) Mx.Trawl.Test; spf=pass')).toBe('mx.trawl.test');
    expect(claimsAuthservId('mx.trawl.test.evil; spf=pass', ID)).toBe(false);
  });
});

import { generateKeyPairSync } from 'node:crypto';
import { dkimSign } from 'mailauth';
import type { Zone } from '../../src/testing/index.ts';

/**
 * A sending domain for the authentication tests: an RSA key generated here (never a fixture), the
 * DNS records that publish it (DKIM), its SPF policy (only 127.0.0.1 may send) and its DMARC policy
 * (reject), and a function that DKIM-signs a message with it.
 */
export interface SendingDomain {
  domain: string;
  selector: string;
  zone: Zone;
  sign(raw: string): Promise<string>;
}

export function sendingDomain(domain: string, o: { bits?: number } = {}): SendingDomain {
  const selector = 's1';
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: o.bits ?? 2048 });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const spki = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  return {
    domain,
    selector,
    zone: {
      [domain]: { TXT: [['v=spf1 ip4:127.0.0.1 -all']], A: ['127.0.0.1'] },
      [`${selector}._domainkey.${domain}`]: { TXT: [[`v=DKIM1; k=rsa; p=${spki}`]] },
      [`_dmarc.${domain}`]: { TXT: [['v=DMARC1; p=reject; adkim=r; aspf=r']] },
    },
    async sign(raw) {
      const r = await dkimSign(raw, {
        signingDomain: domain,
        selector,
        privateKey: pem,
        signatureData: [
          { signingDomain: domain, selector, privateKey: pem, canonicalization: 'relaxed/relaxed' },
        ],
      });
      if (!r.signatures.startsWith('DKIM-Signature:')) throw new Error('the test key did not sign');
      return r.signatures + raw;
    },
  };
}

/** A plain message (CRLF) from `from` to bob@example.org. */
export function message(o: {
  from: string;
  subject: string;
  id: string;
  extra?: string[];
}): string {
  return [
    ...(o.extra ?? []),
    `From: ${o.from}`,
    'To: bob@example.org',
    `Subject: ${o.subject}`,
    `Message-ID: <${o.id}>`,
    'Date: Mon, 2 Nov 2026 09:00:00 +0000',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Hello Bob, the minutes of the meeting are below.',
    '',
  ].join('\r\n');
}

import { generateKeyPairSync } from 'node:crypto';
import { dkimSign } from 'mailauth';
import type { Zone } from './dns-server.ts';

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

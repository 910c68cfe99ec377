import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestKeyPair {
  privateKeyPem: string;
  publicKeyPem: string;
}

/** A fresh 2048-bit RSA key pair (made per test run: no key is kept in the repository). */
export function testKeyPair(): TestKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

/** Debian's openssl (package `openssl`; scripts/ci.sh installs it when missing). */
const OPENSSL = '/usr/bin/openssl';

export interface TestCertificate extends TestKeyPair {
  certificatePem: string;
}

/** A self-signed certificate and its key, made by Debian's openssl for this run. */
export function testCertificate(cn = 'trawl-test'): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-cert-'));
  try {
    const key = join(dir, 'key.pem');
    const cert = join(dir, 'cert.pem');
    execFileSync(
      OPENSSL,
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '2',
      ].concat(['-subj', `/CN=${cn}`]),
      { stdio: 'ignore', timeout: 30_000 },
    );
    const certificatePem = readFileSync(cert, 'utf8');
    const privateKeyPem = readFileSync(key, 'utf8');
    const publicKeyPem = execFileSync(OPENSSL, ['x509', '-in', cert, '-pubkey', '-noout'], {
      encoding: 'utf8',
    });
    return { certificatePem, privateKeyPem, publicKeyPem };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

import { htmlToText } from '@trawl/mail';

/**
 * Payment and credential requests in English, German, Portuguese, Dutch, French and Spanish.
 * Matched on word boundaries in lower-cased, accent-folded text.
 */
const PAYMENT = [
  'wire transfer',
  'bank transfer',
  'bank details',
  'banking details',
  'account details',
  'iban',
  'swift code',
  'routing number',
  'gift card',
  'gift cards',
  'itunes card',
  'payment',
  'pay the invoice',
  'outstanding invoice',
  'overdue invoice',
  'remittance',
  'urgent transfer',
  'bitcoin',
  'crypto wallet',
  'uberweisung',
  'zahlung',
  'bankverbindung',
  'kontodaten',
  'gutschein',
  'offene rechnung',
  'transferencia bancaria',
  'transferencia',
  'pagamento',
  'dados bancarios',
  'cartao presente',
  'cartao-presente',
  'fatura em aberto',
  'overschrijving',
  'betaling',
  'bankgegevens',
  'cadeaubon',
  'openstaande factuur',
  'virement',
  'paiement',
  'coordonnees bancaires',
  'carte cadeau',
  'facture impayee',
  'pago',
  'datos bancarios',
  'tarjeta regalo',
  'factura pendiente',
];
const CREDENTIAL = [
  'password',
  'passcode',
  'verify your account',
  'confirm your account',
  'verify your identity',
  'log in',
  'login',
  'sign in',
  'credentials',
  'security code',
  'one-time code',
  'update your account',
  'mailbox',
  'account suspended',
  'account will be closed',
  'passwort',
  'kennwort',
  'anmelden',
  'zugangsdaten',
  'konto bestatigen',
  'senha',
  'entrar',
  'confirme sua conta',
  'verifique sua conta',
  'wachtwoord',
  'inloggen',
  'bevestig uw account',
  'mot de passe',
  'identifiant',
  'connectez-vous',
  'verifiez votre compte',
  'contrasena',
  'iniciar sesion',
  'verifique su cuenta',
  'confirme su cuenta',
];

function compile(words: string[]): RegExp {
  const alt = words
    .map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ /g, '\\s+'))
    .join('|');
  return new RegExp(`(?<![\\p{L}\\p{N}])(?:${alt})(?![\\p{L}\\p{N}])`, 'giu');
}
const PAYMENT_RE = compile(PAYMENT);
const CREDENTIAL_RE = compile(CREDENTIAL);
const MAX_SCAN = 50_000;

function fold(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

function found(re: RegExp, text: string): string[] {
  return [...new Set([...text.matchAll(re)].map((m) => m[0].replace(/\s+/g, ' ')))].slice(0, 5);
}

/** Payment and credential phrases in the subject and body. */
export function requestLanguage(subject: string, bodyText?: string, bodyHtml?: string) {
  const body =
    bodyText && bodyText.trim() !== ''
      ? bodyText
      : bodyHtml
        ? htmlToText(bodyHtml.slice(0, MAX_SCAN * 4))
        : '';
  const text = fold(`${subject}\n${body.slice(0, MAX_SCAN)}`);
  return { payment: found(PAYMENT_RE, text), credential: found(CREDENTIAL_RE, text) };
}

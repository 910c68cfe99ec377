import { describe, expect, it } from 'vitest';
import { guessLanguage } from '../../src/index.ts';

const samples: Record<string, string> = {
  en: 'Your account has been suspended. Please click the link below to verify your identity and restore access to your mailbox.',
  de: 'Ihr Konto wurde gesperrt. Bitte klicken Sie auf den Link, um Ihre Identität zu bestätigen und den Zugang wiederherzustellen.',
  pt: 'Sua conta foi suspensa. Por favor clique no link abaixo para verificar a sua identidade e restaurar o acesso.',
  nl: 'Uw account is geblokkeerd. Klik op de onderstaande link om uw identiteit te bevestigen en de toegang te herstellen.',
  fr: "Votre compte a été suspendu. Veuillez cliquer sur le lien ci-dessous pour vérifier votre identité et rétablir l'accès.",
  es: 'Su cuenta ha sido suspendida. Por favor haga clic en el enlace de abajo para verificar su identidad y restaurar el acceso.',
  it: "Il tuo account è stato sospeso. Per favore clicca sul link qui sotto per verificare la tua identità e ripristinare l'accesso.",
  pl: 'Twoje konto zostało zawieszone. Kliknij poniższy link, aby potwierdzić swoją tożsamość i przywrócić dostęp do konta.',
  ru: 'Ваш аккаунт заблокирован. Пожалуйста, подтвердите свои данные по ссылке ниже.',
  ja: 'お客様のアカウントは一時的に停止されました。以下のリンクから確認してください。',
};

describe('guessLanguage', () => {
  for (const [lang, text] of Object.entries(samples)) {
    it(`recognises ${lang}`, () => expect(guessLanguage(text)).toBe(lang));
  }
  it('answers undefined when unsure', () => {
    expect(guessLanguage('')).toBeUndefined();
    expect(guessLanguage('OK')).toBeUndefined();
    expect(guessLanguage('1234 5678 9012 3456 7890 ##### ----- =====')).toBeUndefined();
    expect(guessLanguage('xkcd qwrtz plmbg vrrst kkklm zzzap fffgh')).toBeUndefined();
  });
  it('looks only at the first few KB', () => {
    expect(
      guessLanguage(
        `${samples.en} `.repeat(50) + 'Ihr Konto wurde gesperrt und bitte '.repeat(10_000),
      ),
    ).toBe('en');
  });
  it('tells scripts apart, kana winning over shared Han characters', () => {
    const han = '中文字符测试'.repeat(5);
    expect(guessLanguage(han)).toBe('zh');
    expect(guessLanguage(`${han}これは`)).toBe('zh');
    expect(guessLanguage(`${han}これはです`)).toBe('ja');
    expect(guessLanguage('Привет это текст на русском языке для проверки')).toBe('ru');
  });
  it('counts letters hinting at a language, and words of any length', () => {
    expect(guessLanguage('Señor ¿dónde está la cuenta? ¡Hola! el la los')).toBe('es');
    expect(guessLanguage('Straße ist nicht die der und')).toBe('de');
    expect(guessLanguage('Pagamento não está em sua conta você')).toBe('pt');
    expect(guessLanguage(`${'supercalifragilistic '.repeat(20)}the and`)).toBe('en');
    expect(guessLanguage(`${'supercalifragilistic '.repeat(20)}the`)).toBeUndefined();
  });
});

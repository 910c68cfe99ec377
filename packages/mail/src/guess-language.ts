export function guessLanguage(_text: string): string | undefined {
  return undefined;
}

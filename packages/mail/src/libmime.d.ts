declare module 'libmime' {
  interface Libmime {
    decodeWords(str: string): string;
    decodeHeader(headerLine: string): { key: string; value: string };
  }
  const libmime: Libmime;
  export default libmime;
}

/**
 * The leaf libraries mailparser 3.9 hands the hard rules to, loaded the way it loads them (CommonJS,
 * same versions, pinned in package.json): libmime (RFC 2047 words, RFC 2231 parameters, flowed text,
 * MIME types), nodemailer's address parser, iconv-lite and encoding-japanese (charsets), he (HTML
 * escapes of the summary of an attached message), punycode.js (IDN addresses).
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export interface StructuredHeader {
  value: string;
  params: Record<string, string>;
}

export interface LibmimeApi {
  decodeWords(str: string): string;
  decodeHeader(headerLine: string): { key: string; value: string };
  parseHeaderValue(str: string): StructuredHeader;
  detectMimeType(extension: string): string | false | undefined;
  decodeFlowed(str: string, delSp?: boolean): string;
  normalizeCharset(charset: string): string;
}

export interface ParsedAddress {
  address?: string;
  name?: string;
  group?: ParsedAddress[];
}

export interface IconvDecoder {
  write(buf: Buffer): string | undefined;
  end(): string | undefined;
}

export const libmime = require('libmime') as LibmimeApi;
export const addressparser = require('nodemailer/lib/addressparser') as (
  str: string,
) => ParsedAddress[];
export const iconv = require('iconv-lite') as {
  getDecoder(encoding: string): IconvDecoder;
};
export const encodingJapanese = require('encoding-japanese') as {
  convert(data: Buffer, options: { to: string; from: string; type: 'string' }): unknown;
};
export const he = require('he') as { encode(text: string): string };
export const punycode = require('punycode.js') as { toUnicode(domain: string): string };

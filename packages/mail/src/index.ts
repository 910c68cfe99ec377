export * from './addresses.ts';
export * from './auth-results.ts';
export * from './char-codes.ts';
export {
  type AttachmentBytes,
  DOCUMENT_LINK_LIMITS,
  type DocumentLinkLimits,
  documentLinks,
  documentUrls,
  urlsOfDocumentLinks,
} from './document-links.ts';
export * from './email-id.ts';
export * from './errors.ts';
export * from './extract-urls.ts';
export * from './guess-language.ts';
export * from './header-values.ts';
export * from './html-entities.ts';
export * from './html-to-text.ts';
export * from './ip-address.ts';
export * from './mail-date.ts';
export * from './mbox.ts';
export * from './outlook-msg.ts';
export * from './parse-raw-email.ts';
export * from './raw-headers.ts';
export * from './reported-mail.ts';
export * from './sniff-attachment.ts';

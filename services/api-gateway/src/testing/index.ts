// `@trawl/api-gateway/testing`: what the gateway's tests and benchmarks share.
export {
  /** A phishing-like raw MIME message of about `bytes` bytes (HTML body, links). */
  rawMessage,
} from './raw-messages.ts';

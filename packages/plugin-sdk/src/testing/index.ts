export {
  type ConformanceClient,
  type ConformanceResponse,
  /** Talks to a running service over HTTP. */
  httpClient,
  /** Talks to an app in-process (`app.inject`). */
  injectClient,
} from './client.ts';
export {
  type ConformanceOptions,
  /** Declares vitest tests checking that a plugin honours Trawl's wire contract. */
  pluginConformance,
} from './conformance.ts';
export {
  /** A small, valid Email used by the conformance suite when the author gives none. */
  SAMPLE_EMAIL,
} from './sample-email.ts';

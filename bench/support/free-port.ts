/** A TCP port nobody listens on now (the benchmarks' clusters, and the e2e tests through theirs). */
export { freePort } from '@trawl/platform/testing';

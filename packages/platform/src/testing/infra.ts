import { testInfra } from '@trawl/config';

/** The local test servers (TRAWL_TEST_* variables, read by @trawl/config; defaults in docs/development.md). */
export function testUrls(): { databaseUrl: string; redisUrl: string; rabbitmqUrl: string } {
  return testInfra();
}

/** A short unique name part for schemas, key prefixes and broker names. */
export function uniqueSuffix(): string {
  return `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
}

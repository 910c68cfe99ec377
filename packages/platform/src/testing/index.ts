export { type BrokerTarget, brokerConformance, waitFor } from './broker-conformance.ts';
export { type CacheTarget, cacheConformance } from './cache-conformance.ts';
export { testUrls, uniqueSuffix } from './infra.ts';
export { type MemoryPlatform, memoryPlatform } from './memory-platform.ts';
export {
  newJob,
  type StoreTarget,
  sampleEmail,
  sampleResult,
  sampleTrace,
  storeConformance,
} from './store-conformance.ts';
export { deleteByPrefix, type TestRedis, testRedis } from './test-redis.ts';
export { type TestSchema, testSchema } from './test-schema.ts';

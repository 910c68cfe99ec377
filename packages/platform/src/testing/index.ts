export { type BrokerTarget, brokerConformance, waitFor } from './broker-conformance.ts';
export { type CacheTarget, cacheConformance } from './cache-conformance.ts';
export { classifierStoreConformance } from './classifier-conformance.ts';
export { freePort } from './free-port.ts';
export { testUrls, uniqueSuffix } from './infra.ts';
export { type MemoryPlatform, memoryPlatform } from './memory-platform.ts';
export { closeConnectionsByName, findConnections } from './rabbitmqctl.ts';
export {
  newJob,
  type StoreTarget,
  sampleEmail,
  sampleResult,
  sampleTrace,
  storeConformance,
} from './store-conformance.ts';
export { type TestBroker, testBroker } from './test-broker.ts';
export { deleteByPrefix, type TestRedis, testRedis } from './test-redis.ts';
export { type TestSchema, testSchema } from './test-schema.ts';
export {
  type ReceivedWebhook,
  startWebhookReceiver,
  type WebhookReceiver,
  webhookConformance,
} from './webhook-conformance.ts';

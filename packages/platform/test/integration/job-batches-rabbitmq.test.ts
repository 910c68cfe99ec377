import { testBroker } from '../../src/testing/index.ts';
import { jobBatchesSuite } from '../helpers/job-batches-suite.ts';

jobBatchesSuite('RabbitMQ', {
  async open() {
    const tb = await testBroker({ declare: false });
    return { broker: tb.broker, prefix: tb.prefix, close: () => tb.cleanup() };
  },
});

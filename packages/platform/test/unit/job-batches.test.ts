import { createMemoryBroker } from '../../src/index.ts';
import { jobBatchesSuite } from '../helpers/job-batches-suite.ts';

jobBatchesSuite('in-process broker', {
  async open() {
    const broker = createMemoryBroker().connect();
    return { broker, prefix: 'mem', close: () => broker.close() };
  },
});

// `pnpm bench:gateway`: gateway submissions vs a bare Fastify route (see the file imported below).
import { runGatewayBench } from './submit-bench.ts';

runGatewayBench().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

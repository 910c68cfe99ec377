// `tsx bench/gateway/raw-parse.ts`: raw-message parsing inline vs in the gateway's CPU pool
// (issue 15; see the file imported below).
import { runRawParseBench } from './raw-parse-bench.ts';

runRawParseBench().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

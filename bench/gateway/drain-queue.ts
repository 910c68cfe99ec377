/**
 * Benchmark helper, run as a child process by submit-bench.ts: consumes and acks the analysis
 * requests as the orchestrator would, outside the gateway's process (a consumer in the gateway's
 * event loop would charge it for the orchestrator's work). Prints "ready" once consuming; stops
 * when its stdin closes (the parent exited or ended it) or on SIGTERM.
 * Args: <amqp url> <queue>
 */
import { createRabbitBroker } from '@trawl/platform';

const [url, queue] = process.argv.slice(2);
if (!url || !queue) {
  console.error('usage: drain-queue <amqp url> <queue>');
  process.exit(2);
}
const broker = createRabbitBroker({ url, connectionName: `trawl-bench-drain-${process.pid}` });
const consumer = await broker.consume(queue, (d) => d.ack(), { prefetch: 256 });
console.log('ready');

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await consumer.cancel().catch(() => undefined);
  await broker.close().catch(() => undefined);
  process.exit(0);
}
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.resume();
process.on('SIGTERM', stop);
setTimeout(stop, 10 * 60 * 1000).unref(); // bounded, whatever happens to the parent

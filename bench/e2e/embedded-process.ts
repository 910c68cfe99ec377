/**
 * The all-in-one service (embedded mode) for the benchmark: the same startEmbedded() that
 * `pnpm start` runs, without the first-start .env writing (the benchmark passes every variable).
 * DATABASE_URL, RABBITMQ_URL and REDIS_URL are set, so it uses the real servers.
 */

import { startEmbedded } from '@trawl/all-in-one';
import { loadConfigOrExit } from '@trawl/config';

const cfg = loadConfigOrExit({
  needs: { postgres: false, rabbitmq: false, redis: false, secretKey: true },
});
const embedded = await startEmbedded(cfg, { version: 'bench' });
process.stdout.write(`embedded ready on ${embedded.url} (${JSON.stringify(embedded.backends)})\n`);
let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await embedded.close().catch(() => {});
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());

/**
 * `pnpm start`: every Trawl service in this one process (embedded mode) on API_GATEWAY_PORT (8001).
 * First start without a `.env`: writes one with fresh secrets and an admin, and prints the admin
 * credentials once. DATABASE_URL / RABBITMQ_URL / REDIS_URL point it at real servers.
 */
import { findRepoRoot, loadConfigOrExit } from '@trawl/config';
import { packageVersion, type RunningService, runService } from '@trawl/platform';
import { formatBanner } from './banner.ts';
import { startEmbedded } from './embedded.ts';
import { embeddedRetrieversFromEnv } from './embedded-retrievers.ts';
import { writeFirstStartEnv } from './env-file.ts';

const version = (): string => packageVersion(new URL('../package.json', import.meta.url));

async function main(): Promise<RunningService> {
  const t0 = performance.now();
  const root = findRepoRoot();
  const firstStart = writeFirstStartEnv(root, process.env);
  const cfg = loadConfigOrExit({
    rootDir: root,
    needs: { postgres: false, rabbitmq: false, redis: false, secretKey: true },
  });
  // The Graph / Gmail retrievers run here when their mailboxes are named (docs/mail-ingestion.md).
  const retrievers = embeddedRetrieversFromEnv(process.env);
  const embedded = await startEmbedded(cfg, { version: version(), retrievers });
  process.stdout.write(
    `${formatBanner({
      embedded,
      startupMs: performance.now() - t0,
      firstStart,
      adminCreated: embedded.adminCreated,
      dataDir: cfg.dataDir,
    })}\n`,
  );

  return {
    hardExitMs: cfg.orchestrator.shutdownGraceMs + 15_000,
    async stop(signal) {
      process.stdout.write(
        `\n${signal}: stopping (in-flight jobs may finish, queued ones are kept)\n`,
      );
      await embedded.close();
      process.stdout.write('Trawl stopped.\n');
    },
  };
}

void runService('Trawl', main);

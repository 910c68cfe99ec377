/**
 * `pnpm start`: every Trawl service in this one process (embedded mode) on API_GATEWAY_PORT (8001).
 * First start without a `.env`: writes one with fresh secrets and an admin, and prints the admin
 * credentials once. DATABASE_URL / RABBITMQ_URL / REDIS_URL point it at real servers.
 */
import { findRepoRoot, loadConfigOrExit } from '@trawl/config';
import { packageVersion } from '@trawl/platform';
import { formatBanner } from './banner.ts';
import { startEmbedded } from './embedded.ts';
import { writeFirstStartEnv } from './env-file.ts';

const version = (): string => packageVersion(new URL('../package.json', import.meta.url));

async function main(): Promise<void> {
  const t0 = performance.now();
  const root = findRepoRoot();
  const firstStart = writeFirstStartEnv(root, process.env);
  const cfg = loadConfigOrExit({
    rootDir: root,
    needs: { postgres: false, rabbitmq: false, redis: false, secretKey: true },
  });
  const embedded = await startEmbedded(cfg, { version: version() });
  process.stdout.write(
    `${formatBanner({
      embedded,
      startupMs: performance.now() - t0,
      firstStart,
      adminCreated: embedded.adminCreated,
      dataDir: cfg.dataDir,
    })}\n`,
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(
      `\n${signal}: stopping (in-flight jobs may finish, queued ones are kept)\n`,
    );
    const hard = setTimeout(() => process.exit(1), cfg.orchestrator.shutdownGraceMs + 15_000);
    hard.unref();
    try {
      await embedded.close();
      process.stdout.write('Trawl stopped.\n');
      process.exit(0);
    } catch (err) {
      process.stderr.write(`error while stopping: ${(err as Error).message}\n`);
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(
    `Trawl failed to start: ${err instanceof Error ? err.message : String(err)}\n`,
  );
  process.exit(1);
});

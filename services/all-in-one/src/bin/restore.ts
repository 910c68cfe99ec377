/**
 * `pnpm -s restore <backup.tar.gz> [--force]`: restores an online backup of the embedded mode
 * (`trawl backup`) into TRAWL_DATA_DIR. Stop Trawl first. docs/operations.md#backup-and-restore.
 */
import { loadConfigOrExit } from '@trawl/config';
import { restoreBackup } from '../restore.ts';

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith('-'));
if (!file || args.includes('-h') || args.includes('--help')) {
  process.stderr.write('usage: pnpm -s restore <backup.tar.gz> [--force]   (stop Trawl first)\n');
  process.exit(file ? 0 : 2);
}
const cfg = loadConfigOrExit({
  needs: { postgres: false, rabbitmq: false, redis: false, secretKey: false },
});
if (cfg.database.explicit) {
  process.stderr.write('DATABASE_URL is set: restore a PostgreSQL database with pg_restore/psql\n');
  process.exit(1);
}
try {
  const r = await restoreBackup({
    dataDir: cfg.dataDir,
    backupFile: file,
    force: args.includes('--force'),
  });
  process.stdout.write(
    `restored ${file} into ${r.restored}${r.previous ? `\nthe previous database is kept in ${r.previous}` : ''}\n`,
  );
} catch (err) {
  process.stderr.write(`restore failed: ${(err as Error).message}\n`);
  process.exit(1);
}

/**
 * `pnpm db:migrate [DATABASE_URL]`: applies the pending migrations to PostgreSQL.
 * Without an argument the URL comes from the configuration (DATABASE_URL or the POSTGRES_* parts).
 */

import { loadConfigOrExit, redactUrl } from '@trawl/config';
import { errorText } from '@trawl/contracts';
import { migrate } from '../store/migrate.ts';
import { createPgClient } from '../store/pg-client.ts';

async function main(): Promise<void> {
  const url =
    process.argv[2] ??
    loadConfigOrExit({ needs: { postgres: true, rabbitmq: false, redis: false, secretKey: false } })
      .database.url;
  const sql = createPgClient({ url, max: 2, applicationName: 'trawl-migrate' });
  try {
    const applied = await migrate(sql);
    process.stdout.write(
      applied.length === 0
        ? `database ${redactUrl(url)} is up to date\n`
        : `applied ${applied.length} migration(s) to ${redactUrl(url)}: ${applied.join(', ')}\n`,
    );
  } finally {
    await sql.close();
  }
}

main().catch((err: unknown) => {
  const code = (err as { code?: unknown }).code;
  process.stderr.write(
    `migration failed${typeof code === 'string' ? ` (${code})` : ''}: ${errorText(err)}\n`,
  );
  process.exit(1);
});

import type { Embedded } from './embedded.ts';
import type { FirstStartEnv } from './env-file.ts';

/**
 * What `pnpm start` prints once it listens: the address, the backends, the start-up time, and on the
 * first start the admin credentials (printed this once; they live in .env afterwards).
 */
export function formatBanner(o: {
  embedded: Pick<Embedded, 'url' | 'backends' | 'requeued' | 'mail'>;
  startupMs: number;
  firstStart?: FirstStartEnv | undefined;
  adminCreated: boolean;
  dataDir: string;
}): string {
  const e = o.embedded;
  const lines = [
    '',
    `Trawl is running at ${e.url}  (started in ${(o.startupMs / 1000).toFixed(1)} s)`,
    `  store: ${e.backends.store === 'pglite' ? `PGlite in ${o.dataDir}` : 'PostgreSQL'}` +
      `, broker: ${e.backends.broker === 'memory' ? 'in-process' : 'RabbitMQ'}` +
      `, cache: ${e.backends.cache === 'memory' ? 'in-process' : 'Redis'}` +
      `${e.mail ? ', mail ingestion: on' : ''}`,
    `  API docs: ${e.url}/docs   health: ${e.url}/health   metrics: ${e.url}/metrics`,
  ];
  if (e.requeued > 0) lines.push(`  ${e.requeued} unfinished job(s) from the last run re-queued`);
  if (o.firstStart) {
    lines.push('');
    lines.push(`First start: wrote ${o.firstStart.path} (mode 0600) with new secrets.`);
    if (o.adminCreated && o.firstStart.adminPassword !== undefined) {
      lines.push(
        '================ admin credentials (shown once; also in .env) ================',
        `  TRAWL_ADMIN_USER=${o.firstStart.adminUser}`,
        `  TRAWL_ADMIN_PASSWORD=${o.firstStart.adminPassword}`,
        '==============================================================================',
      );
    } else if (!o.adminCreated) {
      lines.push('  Users already existed in the data folder: the admin in .env was not created.');
    }
    lines.push(
      '',
      'Next, in another terminal:',
      `  pnpm trawl login --url ${e.url} --user ${o.firstStart.adminUser}`,
      '  pnpm trawl analyze message.eml --wait',
      '  pnpm trawl jobs',
    );
  }
  lines.push('Stop with Ctrl-C.', '');
  return lines.join('\n');
}

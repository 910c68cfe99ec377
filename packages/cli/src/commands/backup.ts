import type { Ctx } from '../context.ts';
import { EXIT } from '../exit-codes.ts';

/**
 * `trawl backup`: an online backup of the embedded mode's database (POST /api/v1/system/backup,
 * admin), taken while Trawl keeps running and written on the server under TRAWL_DATA_DIR/backups.
 * A scale-out deployment answers 404: back PostgreSQL up with pg_dump (docs/operations.md).
 */
export async function backup(ctx: Ctx): Promise<number> {
  const r = await ctx
    .api()
    .request<{ file: string; bytes: number; created_at: string }>('POST', '/api/v1/system/backup', {
      json: {},
    });
  if (ctx.json) ctx.printJson(r);
  else
    ctx.print(
      `backup written: ${r.file} (${(r.bytes / 1024 / 1024).toFixed(1)} MiB)\nrestore: stop Trawl, then pnpm -s restore ${r.file} --force`,
    );
  return EXIT.ok;
}

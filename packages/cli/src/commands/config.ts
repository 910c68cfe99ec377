import type { Ctx } from '../context.ts';
import { EXIT } from '../exit-codes.ts';

export async function configShow(ctx: Ctx): Promise<number> {
  const r = await ctx.api().request<Record<string, unknown>>('GET', '/api/v1/config');
  if (ctx.json) ctx.printJson(r);
  else {
    const c = r as {
      version?: string;
      analyzer?: { timeout_ms?: number; min_confidence?: number };
      workflow?: { default_workflow_id?: string; max_retries?: number };
    };
    ctx.print(
      [
        `version            ${c.version ?? ''}`,
        `default workflow   ${c.workflow?.default_workflow_id ?? ''}`,
        `max retries        ${c.workflow?.max_retries ?? ''}`,
        `analyzer timeout   ${c.analyzer?.timeout_ms ?? ''} ms`,
        `min confidence     ${c.analyzer?.min_confidence ?? ''}`,
      ].join('\n'),
    );
  }
  return EXIT.ok;
}

export async function configReload(ctx: Ctx): Promise<number> {
  const r = await ctx.api().request<{
    old_version: string;
    new_version: string;
    changed: { platform: boolean; workflows: boolean; analyzers: string[] };
  }>('POST', '/api/v1/config/reload');
  if (ctx.json) ctx.printJson(r);
  else if (r.old_version === r.new_version) ctx.print(`no change (version ${r.new_version})`);
  else {
    const parts = [
      r.changed.platform ? 'platform' : '',
      r.changed.workflows ? 'workflows' : '',
      r.changed.analyzers.length ? `analyzers ${r.changed.analyzers.join(', ')}` : '',
    ].filter(Boolean);
    ctx.print(
      `reloaded: ${r.old_version} → ${r.new_version} (changed: ${parts.join('; ') || 'nothing'})`,
    );
  }
  return EXIT.ok;
}

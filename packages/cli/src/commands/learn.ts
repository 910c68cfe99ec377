import type { Ctx } from '../context.ts';
import { EXIT } from '../exit-codes.ts';
import { analyzersTool } from './eval.ts';

/**
 * `trawl learn --phishing PATH --legitimate PATH | --export FILE | --import FILE | --status`: trains
 * the deployment's classifier from labelled mail (folders of .eml, maildirs, mbox files), or
 * exports / imports its state. Runs locally against the store (DATABASE_URL, else the embedded
 * PGlite data directory) through packages/analyzers/src/bin/learn.ts; no server is asked.
 */
export async function learnCommand(ctx: Ctx, args: string[]): Promise<number> {
  return analyzersTool(ctx, 'learn.ts', args);
}

/**
 * `trawl learn --forget USER` (issue 28): asks the gateway to unlearn every feedback label USER
 * gave (POST /api/v1/feedback/teachers/USER/forget, admin, audited); each of their jobs is decided
 * again, so another analyst's label is learnt in its place when the rule gives one.
 */
export async function learnForgetCommand(ctx: Ctx, user: string): Promise<number> {
  const r = await ctx
    .api()
    .request<{ user: string; jobs: number; changed: number }>(
      'POST',
      `/api/v1/feedback/teachers/${encodeURIComponent(user)}/forget`,
    );
  if (ctx.json) ctx.printJson(r);
  else {
    ctx.print(
      `forgot the labels of ${r.user}: ${r.jobs} jobs decided again, ${r.changed} changed what the classifier learnt`,
    );
  }
  return EXIT.ok;
}

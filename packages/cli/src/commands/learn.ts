import type { Ctx } from '../context.ts';
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

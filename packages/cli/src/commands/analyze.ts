import { resolve } from 'node:path';
import type { Ctx } from '../context.ts';
import { CLI_ERRORS, CliError } from '../errors.ts';
import { EXIT } from '../exit-codes.ts';
import { formatJob, type JobView, progressBar } from '../output.ts';

interface Submitted {
  job_id: string;
  email_id: string;
  status: string;
  workflow: string;
  message: string;
}

/** Polls a job until it is completed or failed (or the timeout passes). */
export async function waitForJob(ctx: Ctx, jobId: string, timeoutMs: number): Promise<JobView> {
  const api = ctx.api();
  const bar = progressBar(ctx.io.stderr);
  const start = ctx.now();
  let delay = 200;
  try {
    for (;;) {
      const job = await api.request<JobView>('GET', `/api/v1/analyze/${encodeURIComponent(jobId)}`);
      const elapsed = ((ctx.now() - start) / 1000).toFixed(1);
      if (job.status === 'completed' || job.status === 'failed') {
        bar.update(3, 3, `${job.status} in ${elapsed} s`);
        return job;
      }
      bar.update(job.status === 'processing' ? 2 : 1, 3, `${job.status}… ${elapsed} s`);
      if (ctx.now() - start > timeoutMs) {
        throw new CliError(
          CLI_ERRORS.timeout,
          `job ${jobId} is still ${job.status} after ${Math.round(timeoutMs / 1000)} s; see \`trawl job ${jobId}\``,
          EXIT.error,
        );
      }
      await ctx.sleep(delay);
      delay = Math.min(2000, Math.round(delay * 1.5));
    }
  } finally {
    bar.done();
  }
}

/** Exit code of a finished job: 10 phishing, 0 clean, 1 failed. */
export function exitCodeOf(job: JobView): number {
  if (job.status === 'failed') return EXIT.error;
  return job.result?.is_phishing ? EXIT.phishing : EXIT.ok;
}

/**
 * Sends the message as message/rfc822 to POST /api/v1/analyze/raw: the server parses it (the CLI
 * reads its bytes and never parses or renders it).
 */
export async function analyze(
  ctx: Ctx,
  o: { file: string; workflow: string | undefined; wait: boolean; timeoutSeconds: number },
): Promise<number> {
  const body =
    o.file === '-' ? await ctx.io.readStdin() : await readInput(ctx, resolve(ctx.io.cwd, o.file));
  if (body.length === 0) throw new CliError(CLI_ERRORS.input, `${o.file} is empty`, EXIT.error);
  const api = ctx.api();
  const sub = await api.request<Submitted>('POST', '/api/v1/analyze/raw', {
    raw: { body, contentType: 'message/rfc822' },
    query: { workflow_id: o.workflow },
  });
  if (!o.wait) {
    if (ctx.json) ctx.printJson(sub);
    else
      ctx.print(
        `queued job ${sub.job_id} (workflow ${sub.workflow})\nsee: trawl job ${sub.job_id}`,
      );
    return EXIT.ok;
  }
  const job = await waitForJob(ctx, sub.job_id, o.timeoutSeconds * 1000);
  if (ctx.json) ctx.printJson(job);
  else {
    const { trace: _trace, ...brief } = job;
    ctx.print(formatJob(brief, { color: !!ctx.io.stdout.isTTY }));
  }
  return exitCodeOf(job);
}

async function readInput(ctx: Ctx, path: string): Promise<Buffer> {
  try {
    return await ctx.io.readFile(path);
  } catch (err) {
    throw new CliError(
      CLI_ERRORS.input,
      `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      EXIT.error,
      { cause: err },
    );
  }
}

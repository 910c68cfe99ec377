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

interface Row {
  file: string;
  job_id?: string;
  status: string;
  job?: JobView;
  error?: string;
}

/**
 * Several messages: each is submitted (a file that cannot be read or is refused is reported in its
 * row, the others go on), then, with --wait, each job is awaited; a table sums them up. Exit code:
 * 1 when any message could not be analysed, else 10 when any is phishing, else 0.
 */
export async function analyzeMany(
  ctx: Ctx,
  o: { files: string[]; workflow: string | undefined; wait: boolean; timeoutSeconds: number },
): Promise<number> {
  if (o.files.includes('-')) {
    throw new CliError(
      CLI_ERRORS.input,
      'standard input (-) can only be analysed alone',
      EXIT.usage,
    );
  }
  const api = ctx.api();
  const rows: Row[] = [];
  for (const file of o.files) {
    try {
      const body = await readInput(ctx, resolve(ctx.io.cwd, file));
      if (body.length === 0) throw new CliError(CLI_ERRORS.input, `${file} is empty`, EXIT.error);
      const sub = await api.request<Submitted>('POST', '/api/v1/analyze/raw', {
        raw: { body, contentType: 'message/rfc822' },
        query: { workflow_id: o.workflow },
      });
      rows.push({ file, job_id: sub.job_id, status: sub.status });
    } catch (err) {
      rows.push({ file, status: 'error', error: (err as Error).message });
    }
  }
  if (o.wait) {
    const deadline = ctx.now() + o.timeoutSeconds * 1000;
    for (const row of rows) {
      if (row.job_id === undefined) continue;
      try {
        const job = await waitForJob(ctx, row.job_id, Math.max(0, deadline - ctx.now()));
        row.job = job;
        row.status = job.status;
        if (job.error) row.error = `${job.error.code}: ${job.error.message}`;
      } catch (err) {
        row.error = (err as Error).message;
      }
    }
  }
  if (ctx.json) {
    ctx.printJson({
      items: rows.map((r) => ({
        file: r.file,
        ...(r.job_id ? { job_id: r.job_id } : {}),
        status: r.status,
        ...(r.job?.result ? { result: r.job.result } : {}),
        ...(r.error ? { error: r.error } : {}),
      })),
    });
  } else {
    ctx.print(formatSummary(rows, o.wait));
  }
  const failed = rows.some(
    (r) => r.status === 'error' || r.status === 'failed' || (o.wait && r.job === undefined),
  );
  if (failed) return EXIT.error;
  return rows.some((r) => r.job?.result?.is_phishing) ? EXIT.phishing : EXIT.ok;
}

/** The summary table of several messages: one row per file. */
export function formatSummary(rows: readonly Row[], waited: boolean): string {
  const fileW = Math.min(40, Math.max(4, ...rows.map((r) => r.file.length)));
  const cut = (s: string, n: number) => (s.length > n ? `…${s.slice(s.length - n + 1)}` : s);
  const head = waited
    ? `${'FILE'.padEnd(fileW)}  ${'JOB'.padEnd(36)}  ${'STATUS'.padEnd(10)}  ${'VERDICT'.padEnd(12)}  CONF  ${'THREAT'.padEnd(8)}  ACTION`
    : `${'FILE'.padEnd(fileW)}  ${'JOB'.padEnd(36)}  STATUS`;
  const lines = [head];
  for (const r of rows) {
    const base = `${cut(r.file, fileW).padEnd(fileW)}  ${(r.job_id ?? '-').padEnd(36)}  ${r.status.padEnd(10)}`;
    const res = r.job?.result;
    if (waited && res) {
      const verdict = res.is_phishing ? 'PHISHING' : 'not phishing';
      lines.push(
        `${base}  ${verdict.padEnd(12)}  ${`${Math.round(res.confidence * 100)}%`.padStart(4)}  ${res.threat_level.padEnd(8)}  ${res.recommended_action}`,
      );
    } else {
      lines.push(r.error ? `${base}  ${r.error}` : base);
    }
  }
  const n = (f: (r: Row) => boolean) => rows.filter(f).length;
  if (waited) {
    lines.push(
      `${rows.length} message(s): ${n((r) => r.job?.result?.is_phishing === true)} phishing, ${n((r) => r.job?.result?.is_phishing === false)} not phishing, ${n((r) => r.job?.result === undefined)} without a verdict`,
    );
  } else {
    lines.push(
      `${rows.length} message(s): ${n((r) => r.job_id !== undefined)} queued; see: trawl job <id>`,
    );
  }
  return lines.join('\n');
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

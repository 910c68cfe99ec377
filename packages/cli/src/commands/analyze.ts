import { extname, join, relative, resolve } from 'node:path';
import { isMbox, isOutlookMsg, OUTLOOK_MSG_CONTENT_TYPE, splitMbox } from '@trawl/mail';
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
async function waitForJob(
  ctx: Ctx,
  jobId: string,
  timeoutMs: number,
  o: { quiet?: boolean } = {},
): Promise<JobView> {
  const api = ctx.api();
  // several messages draw one bar of their own (analyzeMany): no bar per job then
  const bar = o.quiet ? { update() {}, done() {} } : progressBar(ctx.io.stderr);
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
  o: {
    file: string;
    workflow: string | undefined;
    wait: boolean;
    timeoutSeconds: number;
    report?: boolean;
  },
): Promise<number> {
  // a folder, or an mbox file holding several messages: each message gets a row of a table
  const many = () => analyzeMany(ctx, { ...o, files: [o.file] });
  if (o.file !== '-' && (await ctx.io.listDir?.(resolve(ctx.io.cwd, o.file)).catch(() => null)))
    return many();
  const body =
    o.file === '-' ? await ctx.io.readStdin() : await readInput(ctx, resolve(ctx.io.cwd, o.file));
  if (body.length === 0) throw new CliError(CLI_ERRORS.input, `${o.file} is empty`, EXIT.error);
  if (o.file !== '-' && isMbox(body) && splitMbox(body, 2).messages.length > 1) return many();
  const api = ctx.api();
  const sub = await api.request<Submitted>('POST', '/api/v1/analyze/raw', {
    raw: { body, contentType: contentTypeOf(body) },
    query: { workflow_id: o.workflow, ...(o.report ? { report: 'true' } : {}) },
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

/** An Outlook .msg (CFB signature) goes as application/vnd.ms-outlook, anything else as mail. */
function contentTypeOf(body: Buffer): string {
  return isOutlookMsg(body) ? OUTLOOK_MSG_CONTENT_TYPE : 'message/rfc822';
}

/** Files a folder contributes: mail files, Outlook .msg, mbox files, and Maildir messages. */
const MAIL_EXTENSIONS = ['.eml', '.msg', '.mbox', '.mbx', '.txt'];
const MAX_FILES = 100_000;

async function walk(ctx: Ctx, dir: string, depth: number, out: string[]): Promise<void> {
  const entries = await ctx.io.listDir?.(dir);
  if (!entries) return;
  const maildir = /[\\/](cur|new)$/.test(dir);
  for (const e of [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (out.length >= MAX_FILES) return;
    if (e.name.startsWith('.')) continue;
    const path = join(dir, e.name);
    if (e.dir) {
      if (depth < 16) await walk(ctx, path, depth + 1, out);
    } else if (maildir || MAIL_EXTENSIONS.includes(extname(e.name).toLowerCase())) {
      out.push(path);
    }
  }
}

/** One message to submit: its label in the table and its bytes. */
interface Input {
  label: string;
  body?: Buffer;
  error?: string;
}

/**
 * The messages of the arguments: files as they are, the mail files of folders (recursively), and
 * each message of an mbox file (split on its `From ` lines, `>From ` unquoted) as `file:N`.
 */
async function expandInputs(ctx: Ctx, args: readonly string[]): Promise<Input[]> {
  const files: string[] = [];
  for (const a of args) {
    const path = resolve(ctx.io.cwd, a);
    const entries = await ctx.io.listDir?.(path).catch(() => null);
    if (entries) await walk(ctx, path, 0, files);
    else files.push(path);
  }
  const out: Input[] = [];
  for (const path of files) {
    const label = relative(ctx.io.cwd, path) || path;
    let body: Buffer;
    try {
      body = await readInput(ctx, path);
    } catch (err) {
      out.push({ label, error: (err as Error).message });
      continue;
    }
    if (isMbox(body)) {
      const { messages } = splitMbox(body);
      if (messages.length > 1 || extname(path).toLowerCase().startsWith('.mb')) {
        messages.forEach((m, i) => {
          out.push({ label: `${label}:${i + 1}`, body: m });
        });
        continue;
      }
    }
    out.push(body.length === 0 ? { label, error: `${label} is empty` } : { label, body });
  }
  return out;
}

/**
 * Several messages (files, folders, mbox files): each is submitted (a file that cannot be read or
 * is refused is reported in its row, the others go on), then, with --wait, each job is awaited; a
 * progress bar shows both on a terminal, and a table sums them up. Exit code: 1 when any message
 * could not be analysed, else 10 when any is phishing, else 0.
 */
export async function analyzeMany(
  ctx: Ctx,
  o: {
    files: string[];
    workflow: string | undefined;
    wait: boolean;
    timeoutSeconds: number;
    report?: boolean;
  },
): Promise<number> {
  if (o.files.includes('-')) {
    throw new CliError(
      CLI_ERRORS.input,
      'standard input (-) can only be analysed alone',
      EXIT.usage,
    );
  }
  const api = ctx.api();
  const inputs = await expandInputs(ctx, o.files);
  if (inputs.length === 0) {
    throw new CliError(
      CLI_ERRORS.input,
      'no message found in the given files and folders',
      EXIT.error,
    );
  }
  const rows: Row[] = [];
  const bar = progressBar(ctx.io.stderr);
  const total = o.wait ? inputs.length * 2 : inputs.length;
  try {
    for (const input of inputs) {
      bar.update(rows.length, total, `submitting ${rows.length + 1}/${inputs.length}`);
      if (input.body === undefined) {
        rows.push({ file: input.label, status: 'error', error: input.error ?? 'unreadable' });
        continue;
      }
      try {
        const sub = await api.request<Submitted>('POST', '/api/v1/analyze/raw', {
          raw: { body: input.body, contentType: contentTypeOf(input.body) },
          query: { workflow_id: o.workflow, ...(o.report ? { report: 'true' } : {}) },
        });
        rows.push({ file: input.label, job_id: sub.job_id, status: sub.status });
      } catch (err) {
        rows.push({ file: input.label, status: 'error', error: (err as Error).message });
      }
    }
    if (o.wait) {
      const deadline = ctx.now() + o.timeoutSeconds * 1000;
      let waited = 0;
      for (const row of rows) {
        waited++;
        bar.update(inputs.length + waited - 1, total, `analysing ${waited}/${rows.length}`);
        if (row.job_id === undefined) continue;
        try {
          const job = await waitForJob(ctx, row.job_id, Math.max(0, deadline - ctx.now()), {
            quiet: true,
          });
          row.job = job;
          row.status = job.status;
          if (job.error) row.error = `${job.error.code}: ${job.error.message}`;
        } catch (err) {
          row.error = (err as Error).message;
        }
      }
    }
  } finally {
    bar.done();
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

/**
 * The summary table of several messages, one row per message: file, subject (from the job's
 * evidence), verdict, phishing probability and action; the job id to look further.
 */
function formatSummary(rows: readonly Row[], waited: boolean): string {
  const fileW = Math.min(40, Math.max(4, ...rows.map((r) => r.file.length)));
  const subjects = rows.map((r) => oneLine(r.job?.result?.evidence?.message?.subject ?? ''));
  const subjW = Math.min(40, Math.max(7, ...subjects.map((x) => x.length)));
  const cut = (s: string, n: number) => (s.length > n ? `…${s.slice(s.length - n + 1)}` : s);
  const cutEnd = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
  const head = waited
    ? `${'FILE'.padEnd(fileW)}  ${'SUBJECT'.padEnd(subjW)}  ${'VERDICT'.padEnd(12)}  ${'PROB'.padStart(4)}  ${'ACTION'.padEnd(10)}  JOB`
    : `${'FILE'.padEnd(fileW)}  ${'JOB'.padEnd(36)}  STATUS`;
  const lines = [head];
  rows.forEach((r, i) => {
    const file = cut(r.file, fileW).padEnd(fileW);
    const res = r.job?.result;
    if (!waited) {
      const base = `${file}  ${(r.job_id ?? '-').padEnd(36)}  ${r.status}`;
      lines.push(r.error ? `${base}  ${r.error}` : base);
      return;
    }
    const subject = cutEnd(subjects[i] ?? '', subjW).padEnd(subjW);
    if (res) {
      const verdict = res.is_phishing ? 'PHISHING' : 'not phishing';
      const prob = res.is_phishing ? res.confidence : 1 - res.confidence;
      lines.push(
        `${file}  ${subject}  ${verdict.padEnd(12)}  ${`${Math.round(prob * 100)}%`.padStart(4)}  ${res.recommended_action.padEnd(10)}  ${r.job_id ?? ''}`,
      );
    } else {
      lines.push(
        `${file}  ${subject}  ${r.status.padEnd(12)}  ${'-'.padStart(4)}  ${'-'.padEnd(10)}  ${r.error ?? r.job_id ?? ''}`,
      );
    }
  });
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

function oneLine(s: string): string {
  return s.replace(/[\r\n\t]+/g, ' ').trim();
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

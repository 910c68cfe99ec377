import { resolve } from 'node:path';
import { parseRawEmail } from '@trawl/mail';
import { parse as parseYaml } from 'yaml';
import type { Ctx } from '../context.ts';
import { CLI_ERRORS, CliError } from '../errors.ts';
import { EXIT } from '../exit-codes.ts';
import { formatJob, type JobView } from '../output.ts';

interface WorkflowSummary {
  id: string;
  name: string;
  description?: string;
  stages: { name: string; analyzers?: { id: string }[] }[];
}

export async function workflowsList(ctx: Ctx): Promise<number> {
  const r = await ctx
    .api()
    .request<{ items: WorkflowSummary[]; default_workflow_id: string; version: string }>(
      'GET',
      '/api/v1/workflows',
    );
  if (ctx.json) {
    ctx.printJson(r);
    return EXIT.ok;
  }
  for (const w of r.items) {
    const ids = [...new Set(w.stages.flatMap((s) => (s.analyzers ?? []).map((a) => a.id)))];
    ctx.print(
      `${w.id === r.default_workflow_id ? '*' : ' '} ${w.id.padEnd(14)} ${w.name}  (${w.stages.length} stage(s): ${ids.join(', ')})`,
    );
  }
  ctx.note(`* default workflow; configuration version ${r.version}`);
  return EXIT.ok;
}

async function readText(ctx: Ctx, file: string): Promise<Buffer> {
  const path = file === '-' ? '-' : resolve(ctx.io.cwd, file);
  try {
    return path === '-' ? await ctx.io.readStdin() : await ctx.io.readFile(path);
  } catch (err) {
    throw new CliError(
      CLI_ERRORS.input,
      `cannot read ${path}: ${(err as Error).message}`,
      EXIT.error,
    );
  }
}

/**
 * Validates the workflows of a YAML file (a `workflows:` list as in config/workflows.yaml, or one
 * workflow) against the server's analyzers and providers. Exit 1 when any has a problem.
 */
export async function workflowsValidate(ctx: Ctx, file: string): Promise<number> {
  const text = (await readText(ctx, file)).toString('utf8');
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new CliError(
      CLI_ERRORS.input,
      `${file} is not valid YAML: ${(err as Error).message}`,
      EXIT.error,
    );
  }
  const list =
    doc && typeof doc === 'object' && Array.isArray((doc as { workflows?: unknown }).workflows)
      ? (doc as { workflows: unknown[] }).workflows
      : [doc];
  const api = ctx.api();
  const results: { id: unknown; valid: boolean; problems: { path: string; message: string }[] }[] =
    [];
  for (const [i, wf] of list.entries()) {
    const r = await api.request<{ valid: boolean; problems: { path: string; message: string }[] }>(
      'POST',
      '/api/v1/workflows/validate',
      { json: wf },
    );
    const id = wf && typeof wf === 'object' ? (wf as { id?: unknown }).id : undefined;
    results.push({ id: id ?? `#${i}`, ...r });
  }
  const ok = results.every((r) => r.valid);
  if (ctx.json) ctx.printJson({ valid: ok, workflows: results });
  else {
    for (const r of results) {
      ctx.print(`${r.valid ? 'ok     ' : 'INVALID'} ${String(r.id)}`);
      for (const p of r.problems) ctx.print(`    ${p.path || '/'}: ${p.message}`);
    }
  }
  return ok ? EXIT.ok : EXIT.error;
}

/**
 * Runs a workflow synchronously on a message without queueing or storing a job, and shows the stage
 * trace. The dry-run endpoint takes an Email, so the message is parsed here with the same parser the
 * server uses (@trawl/mail; nothing in it is fetched or rendered).
 */
export async function workflowsDryRun(ctx: Ctx, id: string, file: string): Promise<number> {
  const raw = await readText(ctx, file);
  let email: Awaited<ReturnType<typeof parseRawEmail>>;
  try {
    email = await parseRawEmail(raw);
  } catch (err) {
    throw new CliError(CLI_ERRORS.input, `${file}: ${(err as Error).message}`, EXIT.error);
  }
  const r = await ctx.api().request<{
    workflow: string;
    status: string;
    result?: JobView['result'];
    error?: JobView['error'];
    trace: JobView['trace'];
  }>('POST', `/api/v1/workflows/${encodeURIComponent(id)}/dry-run`, { json: { email } });
  if (ctx.json) ctx.printJson(r);
  else
    ctx.print(
      formatJob({ job_id: '(dry run, not stored)', ...r, workflow: r.workflow } as JobView, {
        color: !!ctx.io.stdout.isTTY,
        indicators: 10,
      }),
    );
  return r.status === 'completed' ? EXIT.ok : EXIT.error;
}

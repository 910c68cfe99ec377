import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ServiceConfigFile, toProblems, type Workflow } from '@trawl/contracts';
import { type Document, LineCounter, parseDocument } from 'yaml';
import type { AppConfig } from './app-config.ts';
import { contentVersion } from './canonical.ts';
import { ConfigError, type ConfigProblem } from './errors.ts';
import { unknownKeys } from './unknown-keys.ts';
import { type CheckReferences, checkWorkflows, workflowContextFor } from './validate-workflows.ts';

/** service.yaml and workflows.yaml as loaded and validated, with their versions. */
export interface LoadedFiles {
  service: ServiceConfigFile;
  workflows: Workflow[];
  /** Hash of the canonical content of both files: changes only when content changes. */
  version: string;
  serviceVersion: string;
  workflowsVersion: string;
  /** Per analyzer (form A and form B entries together): hash of its configuration. */
  analyzerVersions: Record<string, string>;
  /** The files actually read (after the fallback to a `defaults/` folder). */
  paths: { service: string; workflows: string };
  text: { service: string; workflows: string };
}

/** How loadServiceFiles checks the files: conditions, references, the ids known besides them. */
export interface LoadServiceFilesOptions {
  /** Compiles a CEL expression (the workflow engine provides it): an error message or undefined. */
  checkCondition?: (expr: string) => string | undefined;
  /** Checks what a condition names (the engine's checkConditionReferences). */
  checkReferences?: CheckReferences;
  /** Analyzer ids available besides those declared in service.yaml (e.g. the built-in ones). */
  knownAnalyzers?: Iterable<string>;
  /** Context provider ids available besides those declared in service.yaml. */
  knownProviders?: Iterable<string>;
}

/** What changed between two loads of the service files. */
export interface FilesDiff {
  /** Anything of service.yaml outside the analyzer entries changed. */
  platform: boolean;
  workflows: boolean;
  /** Analyzers added, removed or changed (sorted). */
  analyzers: string[];
}

interface ReadYaml {
  path: string;
  text: string;
  doc: Document | undefined;
  data: unknown;
  lines: LineCounter;
}

/**
 * Reads and validates service.yaml and workflows.yaml completely. A missing file falls back to
 * `<its folder>/defaults/<its name>` (config/service.yaml → config/defaults/service.yaml).
 * Throws one ConfigError listing every problem (file, JSON pointer, line and column when known).
 */
export function loadServiceFiles(
  cfg: Pick<AppConfig, 'configFile' | 'workflowsFile'>,
  opts: LoadServiceFilesOptions = {},
): LoadedFiles {
  const problems: ConfigProblem[] = [];
  const svc = readYaml(cfg.configFile, problems);
  const wfs = readYaml(cfg.workflowsFile, problems);

  // service.yaml
  let service: ServiceConfigFile | undefined;
  if (svc) {
    const raw = svc.data ?? {};
    const parsed = ServiceConfigFile.safeParse(raw);
    if (parsed.success) {
      service = parsed.data;
      for (const path of unknownKeys(raw, parsed.data))
        fileProblem(problems, svc, path, 'unknown key');
    } else {
      for (const p of toProblems(parsed.error)) fileProblem(problems, svc, p.path, p.message);
    }
  }

  // workflows.yaml
  let workflows: Workflow[] = [];
  if (wfs) {
    const data = wfs.data;
    const list =
      data !== null && typeof data === 'object' && !Array.isArray(data)
        ? (data as Record<string, unknown>).workflows
        : undefined;
    if (!Array.isArray(list)) {
      fileProblem(
        problems,
        wfs,
        '/workflows',
        'must be a list of workflows (top-level key workflows:)',
      );
    } else {
      for (const k of Object.keys(data as object)) {
        if (k !== 'workflows') fileProblem(problems, wfs, `/${k}`, 'unknown key');
      }
      const check = checkWorkflows(list, {
        ...(service ? workflowContextFor(service, opts) : {}),
        ...(opts.checkCondition ? { checkCondition: opts.checkCondition } : {}),
        ...(opts.checkReferences ? { checkReferences: opts.checkReferences } : {}),
        pathPrefix: '/workflows',
      });
      workflows = check.workflows;
      for (const p of check.problems) fileProblem(problems, wfs, p.path, p.message);
      if (service) {
        const id = service.workflow.default_workflow_id;
        const ids = list.map((w) =>
          w !== null && typeof w === 'object' ? (w as { id?: unknown }).id : undefined,
        );
        if (!ids.includes(id)) {
          fileProblem(
            problems,
            svc,
            '/workflow/default_workflow_id',
            `workflow "${id}" is not defined in ${wfs.path}`,
          );
        }
      }
    }
  }

  if (problems.length > 0 || !svc || !wfs || !service) throw new ConfigError(problems);

  const serviceVersion = contentVersion(service);
  const workflowsVersion = contentVersion(workflows);
  return {
    service,
    workflows,
    version: contentVersion({ service: serviceVersion, workflows: workflowsVersion }),
    serviceVersion,
    workflowsVersion,
    analyzerVersions: analyzerVersions(service),
    paths: { service: svc.path, workflows: wfs.path },
    text: { service: svc.text, workflows: wfs.text },
  };
}

/** Per-analyzer configuration hash (form A entry and form B entry together). */
export function analyzerVersions(service: ServiceConfigFile): Record<string, string> {
  const ids = new Set([
    ...Object.keys(service.analyzers),
    ...Object.keys(service.plugins.analyzers),
  ]);
  const out: Record<string, string> = {};
  for (const id of [...ids].sort()) {
    out[id] = contentVersion({
      a: service.analyzers[id] ?? null,
      b: service.plugins.analyzers[id] ?? null,
    });
  }
  return out;
}

/** The hash of service.yaml without the analyzer entries: "platform" changes. */
function platformVersion(service: ServiceConfigFile): string {
  const { analyzers: _a, plugins, ...rest } = service;
  return contentVersion({ ...rest, context_providers: plugins.context_providers });
}

/** What changed between two loads (POST /config/reload's `changed`). */
export function diffFiles(
  old: Pick<LoadedFiles, 'service' | 'workflowsVersion' | 'analyzerVersions'>,
  next: Pick<LoadedFiles, 'service' | 'workflowsVersion' | 'analyzerVersions'>,
): FilesDiff {
  const ids = new Set([
    ...Object.keys(old.analyzerVersions),
    ...Object.keys(next.analyzerVersions),
  ]);
  return {
    platform: platformVersion(old.service) !== platformVersion(next.service),
    workflows: old.workflowsVersion !== next.workflowsVersion,
    analyzers: [...ids]
      .filter((id) => old.analyzerVersions[id] !== next.analyzerVersions[id])
      .sort(),
  };
}

function readYaml(path: string, problems: ConfigProblem[]): ReadYaml | undefined {
  const fallback = join(dirname(path), 'defaults', basename(path));
  let actual = path;
  let text = readOptional(path);
  if (text === undefined) {
    actual = fallback;
    text = readOptional(fallback);
  }
  if (text === undefined) {
    problems.push({ file: path, path: '', message: `file not found (nor ${fallback})` });
    return undefined;
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    for (const e of doc.errors) {
      const pos = lines.linePos(e.pos[0]);
      problems.push({
        file: actual,
        path: '',
        message: `YAML: ${e.message.split('\n')[0]}`,
        line: pos.line,
        column: pos.col,
      });
    }
    return undefined;
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 1000 });
  } catch (e) {
    problems.push({ file: actual, path: '', message: `YAML: ${(e as Error).message}` });
    return undefined;
  }
  return { path: actual, text, doc, data, lines };
}

function readOptional(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw e;
  }
}

/** Adds a problem of a parsed file, with the line and column of the nearest node on its path. */
function fileProblem(
  problems: ConfigProblem[],
  f: ReadYaml | undefined,
  path: string,
  message: string,
): void {
  if (!f) return;
  const p: ConfigProblem = { file: f.path, path, message };
  const pos = position(f, path);
  if (pos) {
    p.line = pos.line;
    p.column = pos.col;
  }
  problems.push(p);
}

function position(f: ReadYaml, pointer: string): { line: number; col: number } | undefined {
  if (!f.doc) return undefined;
  const segs = pointer === '' ? [] : pointer.slice(1).split('/').map(unescapeToken);
  for (let n = segs.length; n >= 0; n--) {
    const key = segs.slice(0, n).map((s) => (/^\d+$/.test(s) ? Number(s) : s));
    const node = n === 0 ? f.doc.contents : f.doc.getIn(key, true);
    const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
    if (range) return f.lines.linePos(range[0]);
  }
  return undefined;
}

function unescapeToken(t: string): string {
  return t.replace(/~1/g, '/').replace(/~0/g, '~');
}

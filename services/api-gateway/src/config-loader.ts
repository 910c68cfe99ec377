import type { AppConfig, LoadedFiles } from '@trawl/config';
import { loadServiceFiles } from '@trawl/config';
import { TrawlError } from '@trawl/contracts';
import {
  type CompiledWorkflow,
  checkCondition,
  checkConditionReferences,
  compileWorkflow,
} from '@trawl/workflow-engine';
import type { ConfigSnapshot } from './config-state.ts';

/** The analyzer and provider ids known besides those of service.yaml. */
export interface FileLoaderOptions {
  /** Analyzer ids available besides those of service.yaml (built-in analyzers in embedded mode). */
  knownAnalyzers?: readonly string[];
  knownProviders?: readonly string[];
}

/** Compiles every workflow of loaded files; throws a TrawlError listing every problem. */
export function compileAll(
  files: LoadedFiles,
  opts: FileLoaderOptions = {},
): ConfigSnapshot<CompiledWorkflow> {
  const svc = files.service;
  const analyzers = new Set<string>(opts.knownAnalyzers ?? []);
  for (const id of Object.keys(svc.analyzers)) analyzers.add(id);
  for (const id of Object.keys(svc.plugins.analyzers)) analyzers.add(id);
  const providers = new Set<string>(opts.knownProviders ?? []);
  for (const id of Object.keys(svc.plugins.context_providers)) providers.add(id);
  const compiled = new Map<string, CompiledWorkflow>();
  const problems: { path: string; message: string }[] = [];
  files.workflows.forEach((wf, i) => {
    try {
      compiled.set(
        wf.id,
        compileWorkflow(wf, { knownAnalyzers: analyzers, knownProviders: providers }),
      );
    } catch (err) {
      if (err instanceof TrawlError && err.problems) {
        for (const p of err.problems)
          problems.push({
            path: `${files.paths.workflows}/workflows/${i}${p.path}`,
            message: p.message,
          });
      } else {
        problems.push({
          path: `${files.paths.workflows}/workflows/${i}`,
          message: (err as Error).message,
        });
      }
    }
  });
  if (problems.length > 0) {
    throw new TrawlError('TRAWL_ERR_CONFIG_INVALID', 'the workflows do not compile', {
      status: 400,
      problems,
    });
  }
  return {
    files,
    compiled,
    known: { analyzers: [...analyzers].sort(), providers: [...providers].sort() },
  };
}

/** Loads both configuration files from disk and compiles the workflows (throws when invalid). */
export function loadSnapshot(
  cfg: Pick<AppConfig, 'configFile' | 'workflowsFile'>,
  opts: FileLoaderOptions = {},
): ConfigSnapshot<CompiledWorkflow> {
  const files = loadServiceFiles(cfg, {
    checkCondition,
    checkReferences: checkConditionReferences,
    ...(opts.knownAnalyzers ? { knownAnalyzers: opts.knownAnalyzers } : {}),
    ...(opts.knownProviders ? { knownProviders: opts.knownProviders } : {}),
  });
  return compileAll(files, opts);
}

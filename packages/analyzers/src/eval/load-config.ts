import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ServiceConfigFile, type Workflow, WorkflowsFile } from '@trawl/contracts';
import { parse as parseYaml } from 'yaml';

export interface EvalConfig {
  service: ServiceConfigFile;
  workflows: Workflow[];
  paths: { service: string; workflows: string };
}

/** config/<name> when present, else config/defaults/<name> (the product's fallback rule). */
function configPath(root: string, name: string, explicit?: string): string {
  if (explicit) return explicit;
  const own = join(root, 'config', name);
  return existsSync(own) ? own : join(root, 'config', 'defaults', name);
}

export function loadEvalConfig(
  root: string,
  opts: { service?: string; workflows?: string } = {},
): EvalConfig {
  const servicePath = configPath(root, 'service.yaml', opts.service);
  const workflowsPath = configPath(root, 'workflows.yaml', opts.workflows);
  const service = ServiceConfigFile.parse(parseYaml(readFileSync(servicePath, 'utf8')) ?? {});
  const workflows = WorkflowsFile.parse(parseYaml(readFileSync(workflowsPath, 'utf8'))).workflows;
  return { service, workflows, paths: { service: servicePath, workflows: workflowsPath } };
}

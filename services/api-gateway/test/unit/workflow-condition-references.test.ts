import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@trawl/config';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSnapshot } from '../../src/config-loader.ts';

const defaults = join(import.meta.dirname, '../../../../config/defaults');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function filesWith(workflows: string) {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-cond-'));
  dirs.push(dir);
  const configFile = join(dir, 'service.yaml');
  const workflowsFile = join(dir, 'workflows.yaml');
  writeFileSync(configFile, readFileSync(join(defaults, 'service.yaml'), 'utf8'));
  writeFileSync(workflowsFile, workflows);
  return { configFile, workflowsFile };
}

describe('a workflow condition naming a stage that does not exist (it passed validate and reload)', () => {
  it('stops the load (start-up and reload) naming the workflow, the stage, the line and the column', () => {
    const shipped = readFileSync(join(defaults, 'workflows.yaml'), 'utf8');
    expect(() => loadSnapshot(filesWith(shipped))).not.toThrow();
    const typo = shipped.replace(
      'condition: stages.score.result.probability > 0.25',
      'condition: stages.scroe.result.probability > 0.25',
    );
    expect(typo).not.toBe(shipped);
    let err: unknown;
    try {
      loadSnapshot(filesWith(typo));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const [p] = (err as ConfigError).problems;
    expect(p?.path).toBe('/workflows/0/stages/2/condition');
    expect(p?.line).toBe(shipped.split('\n').findIndex((l) => l.includes('stages.score')) + 1);
    expect(p?.message).toBe(
      'workflow "default", stage "llm" condition, line 1, column 8: unknown stage "scroe" (did you mean "score"?)',
    );
  });
});

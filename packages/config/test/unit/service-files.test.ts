import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.ts';
import { diffFiles, type LoadedFiles, loadServiceFiles } from '../../src/service-files.ts';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');
const tmp = mkdtempSync(join(tmpdir(), 'trawl-files-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const SERVICE = readFileSync(join(fixtures, 'basic/config/service.yaml'), 'utf8');
const WORKFLOWS = readFileSync(join(fixtures, 'basic/config/workflows.yaml'), 'utf8');

let n = 0;
/** Writes a pair of files into a fresh folder and returns the config paths. */
function write(service: string, workflows: string) {
  const dir = join(tmp, `case-${n++}`, 'config');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'service.yaml'), service);
  writeFileSync(join(dir, 'workflows.yaml'), workflows);
  return { configFile: join(dir, 'service.yaml'), workflowsFile: join(dir, 'workflows.yaml') };
}

function load(service: string, workflows: string, opts = {}): LoadedFiles {
  return loadServiceFiles(write(service, workflows), opts);
}

function fail(service: string, workflows: string, opts = {}): ConfigError {
  try {
    load(service, workflows, opts);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('loadServiceFiles', () => {
  it('loads both forms of service.yaml and the workflows, with defaults applied', () => {
    const f = loadServiceFiles({
      configFile: join(fixtures, 'basic/config/service.yaml'),
      workflowsFile: join(fixtures, 'basic/config/workflows.yaml'),
    });
    expect(f.service.version).toBe('3');
    expect(f.service.platform.log_level).toBe('info');
    expect(f.service.analyzers.headers?.settings).toEqual({ phishing_score_threshold: 0.6 });
    expect(f.service.plugins.analyzers.llm?.url).toBe('http://127.0.0.1:9001');
    expect(f.workflows.map((w) => w.id)).toEqual(['standard']);
    expect(f.workflows[0]?.timeout_ms).toBe(300_000);
    expect(f.workflows[0]?.stages[0]?.analyzers[1]?.weight).toBe(1);
    expect(f.version).toMatch(/^[0-9a-f]{16}$/);
    expect(Object.keys(f.analyzerVersions)).toEqual(['headers', 'llm', 'urls']);
    expect(f.text.service).toBe(SERVICE);
    expect(f.paths.service).toBe(join(fixtures, 'basic/config/service.yaml'));
  });

  it('falls back to config/defaults/ when the files are absent', () => {
    const f = loadServiceFiles({
      configFile: join(fixtures, 'fallback/config/service.yaml'),
      workflowsFile: join(fixtures, 'fallback/config/workflows.yaml'),
    });
    expect(f.paths).toEqual({
      service: join(fixtures, 'fallback/config/defaults/service.yaml'),
      workflows: join(fixtures, 'fallback/config/defaults/workflows.yaml'),
    });
    expect(f.workflows).toHaveLength(1);
  });

  it('reports a file that exists nowhere', () => {
    const err = (() => {
      try {
        loadServiceFiles({
          configFile: join(tmp, 'none/service.yaml'),
          workflowsFile: join(tmp, 'none/w.yaml'),
        });
      } catch (e) {
        return e as ConfigError;
      }
      throw new Error('expected a ConfigError');
    })();
    expect(err.problems).toHaveLength(2);
    expect(err.problems[0]?.message).toMatch(/file not found/);
  });

  it('reports YAML errors with file, line and column', () => {
    const err = fail(SERVICE, 'workflows:\n  - id: a\n    name: [unclosed\n  stages: x\n');
    const p = err.problems[0];
    expect(p?.file).toMatch(/workflows\.yaml$/);
    expect(p?.line).toBeTypeOf('number');
    expect(p?.column).toBeTypeOf('number');
    expect(err.message).toMatch(/workflows\.yaml:\d+:\d+: YAML: /);
  });

  it('reports a duplicate key with its position', () => {
    const err = fail('version: "1"\nplatform:\n  debug: true\n  debug: false\n', WORKFLOWS);
    expect(err.problems[0]).toMatchObject({ line: 4, column: 3 });
    expect(err.problems[0]?.message).toMatch(/unique/);
  });

  it('reports schema errors with file, JSON pointer, line and column, all at once', () => {
    const bad = SERVICE.replace('url: http://127.0.0.1:9001', 'url: ftp://nowhere').replace(
      'debug: false',
      'debug: "sometimes"',
    );
    const err = fail(bad, WORKFLOWS.replace('weight: 0.5', 'weight: 1.5'));
    const byPath = Object.fromEntries(err.problems.map((p) => [p.path, p]));
    expect(byPath['/plugins/analyzers/llm/url']).toMatchObject({
      line: 20,
      message: 'must be an http(s) URL',
    });
    expect(byPath['/platform/debug']?.line).toBe(5);
    expect(byPath['/workflows/0/stages/0/analyzers/0/weight']).toMatchObject({
      line: 12,
      column: 21,
    });
    expect(err.message).toContain(
      'service.yaml:20:12 /plugins/analyzers/llm/url: must be an http(s) URL',
    );
  });

  it('refuses unknown keys (typos would be silently ignored otherwise)', () => {
    const err = fail(
      SERVICE,
      WORKFLOWS.replace('failure_strategy: retry', 'failure_stratgy: retry'),
    );
    expect(err.problems).toEqual([
      expect.objectContaining({
        path: '/workflows/0/stages/1/analyzers/0/failure_stratgy',
        message: 'unknown key',
      }),
    ]);
  });

  it('requires the default workflow to exist', () => {
    const err = fail(
      SERVICE.replace('default_workflow_id: standard', 'default_workflow_id: other'),
      WORKFLOWS,
    );
    expect(err.problems).toEqual([
      expect.objectContaining({ path: '/workflow/default_workflow_id', line: 7 }),
    ]);
    expect(err.problems[0]?.message).toContain('workflow "other" is not defined');
  });

  it('checks analyzers and providers against service.yaml plus the known ones', () => {
    const wf = WORKFLOWS.replace('- id: urls', '- id: builtin_nlp').replace(
      '- id: directory',
      '- id: ldap',
    );
    const err = fail(SERVICE, wf);
    expect(err.problems.map((p) => p.message)).toEqual([
      expect.stringContaining('unknown analyzer "builtin_nlp"'),
      expect.stringContaining('unknown context provider "ldap"'),
    ]);
    expect(() =>
      load(SERVICE, wf, { knownAnalyzers: ['builtin_nlp'], knownProviders: ['ldap'] }),
    ).not.toThrow();
  });

  it('compiles conditions through checkCondition', () => {
    const checkCondition = (e: string) => (e.includes('>=') ? undefined : 'syntax error');
    expect(() => load(SERVICE, WORKFLOWS, { checkCondition })).not.toThrow();
    const err = fail(SERVICE, WORKFLOWS.replace('>= 0.4', '=> 0.4'), { checkCondition });
    expect(err.problems).toEqual([
      expect.objectContaining({
        path: '/workflows/0/stages/1/condition',
        message: 'condition does not compile: syntax error',
        line: 16,
      }),
    ]);
  });
});

describe('versions', () => {
  const base = load(SERVICE, WORKFLOWS);

  it('does not change when only formatting and comments change', () => {
    const reformatted = load(
      `# a new comment\n${SERVICE.replace('settings: { llm_model: small }', 'settings:\n        llm_model: small  # inline')}`,
      `# header\n${WORKFLOWS.replace('weight: 0.5', 'weight: 0.50')}\n\n`,
    );
    expect(reformatted.text.service).not.toBe(base.text.service);
    expect(reformatted.version).toBe(base.version);
    expect(reformatted.analyzerVersions).toEqual(base.analyzerVersions);
  });

  it('does not change when a default is written out', () => {
    const explicit = load(
      SERVICE,
      WORKFLOWS.replace('name: Standard', 'name: Standard\n    timeout_ms: 300000'),
    );
    expect(explicit.version).toBe(base.version);
  });

  it('changes when content changes, and diffFiles says what changed', () => {
    const changedAnalyzer = load(
      SERVICE.replace('phishing_score_threshold: 0.6', 'phishing_score_threshold: 0.7'),
      WORKFLOWS,
    );
    expect(changedAnalyzer.version).not.toBe(base.version);
    expect(diffFiles(base, changedAnalyzer)).toEqual({
      platform: false,
      workflows: false,
      analyzers: ['headers'],
    });

    const changedPlugin = load(SERVICE.replace('llm_model: small', 'llm_model: large'), WORKFLOWS);
    expect(diffFiles(base, changedPlugin)).toEqual({
      platform: false,
      workflows: false,
      analyzers: ['llm'],
    });

    const changedPlatform = load(SERVICE.replace('log_level: INFO', 'log_level: DEBUG'), WORKFLOWS);
    expect(diffFiles(base, changedPlatform)).toEqual({
      platform: true,
      workflows: false,
      analyzers: [],
    });

    const changedWorkflow = load(
      SERVICE,
      WORKFLOWS.replace('confidence_threshold: 0.5', 'confidence_threshold: 0.6'),
    );
    expect(changedWorkflow.workflowsVersion).not.toBe(base.workflowsVersion);
    expect(diffFiles(base, changedWorkflow)).toEqual({
      platform: false,
      workflows: true,
      analyzers: [],
    });

    const removed = load(
      SERVICE.replace('  urls:\n    enabled: true\n    url: http://127.0.0.1:8100/urls\n', ''),
      WORKFLOWS.replace('          - id: urls\n', ''),
      { knownAnalyzers: [] },
    );
    expect(diffFiles(base, removed)).toEqual({
      platform: false,
      workflows: true,
      analyzers: ['urls'],
    });
    expect(diffFiles(base, base)).toEqual({ platform: false, workflows: false, analyzers: [] });
  });
});

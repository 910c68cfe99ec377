import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { findRepoRoot } from '../../src/repo-root.ts';

const here = dirname(fileURLToPath(import.meta.url));
const root = findRepoRoot(here);
const tsx = join(root, 'node_modules', '.bin', 'tsx');
const entry = join(here, '..', '..', 'src', 'bin', 'check-config.ts');
// An empty working folder outside the repository: no .env is picked up, nothing is written.
const cwd = mkdtempSync(join(tmpdir(), 'trawl-check-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

/** Runs the entry point with exactly these variables (plus PATH/HOME to find node). */
function run(env: Record<string, string>) {
  const r = spawnSync(tsx, [entry], {
    cwd,
    // TRAWL_ENV_FILE=none: a developer's own .env at the repo root must not leak into the test.
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? cwd,
      TRAWL_ENV_FILE: 'none',
      ...env,
    },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe.skipIf(!existsSync(tsx))('check-config entry point', () => {
  it('exits non-zero naming each bad variable', () => {
    const r = run({
      APP_ENV: 'prod',
      DATABASE_URL: 'mysql://root:hunter2@db/trawl',
      API_GATEWAY_PORT: '70000',
      RABBITMQ_DEFAULT_USER: 'trawl',
      RABBITMQ_DEFAULT_PASS: 'hunter2',
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('Trawl cannot start: invalid configuration');
    expect(r.stderr).toMatch(/DATABASE_URL: must be a postgres:\/\//);
    expect(r.stderr).toMatch(/API_GATEWAY_PORT: must be a port number between 1 and 65535/);
    expect(r.stderr).toMatch(/SECRET_KEY: must be set in production/);
    expect(r.stderr).not.toContain('hunter2');
    expect(r.stdout).not.toContain('configuration ok');
  });

  it('prints "configuration ok" for a valid configuration', () => {
    const r = run({ APP_ENV: 'dev' });
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('configuration ok');
    expect(r.status).toBe(0);
  });
});

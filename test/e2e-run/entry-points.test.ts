import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { findRepoRoot } from '@trawl/config';
import { describe, expect, it } from 'vitest';

/**
 * Every service entry point stops at start-up, non-zero, naming each bad variable, when the
 * configuration is invalid (issue 2). The embedded all-in-one is covered by test/e2e-run/embedded.
 */
const root = findRepoRoot();
const MAINS = [
  'services/api-gateway/src/main.ts',
  'services/analyzer-orchestrator/src/main.ts',
  'services/mail-orchestrator/src/main.ts',
  'services/analyzers/src/main.ts',
];

function start(main: string, env: Record<string, string>) {
  return new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, main)], {
      cwd: root,
      // TRAWL_ENV_FILE=none: a developer's .env must not mend (or break) the configuration.
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? root,
        TRAWL_ENV_FILE: 'none',
        ...env,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => {
      stderr += b.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

describe('service entry points refuse an invalid configuration', () => {
  it.each(MAINS)('%s exits non-zero and names each bad variable it uses', async (main) => {
    const r = await start(main, {
      APP_ENV: 'prod',
      DATABASE_URL: 'mysql://nope',
      API_GATEWAY_PORT: '70000',
      POSTGRES_DB: 'trawl',
      POSTGRES_USER: 'trawl',
      POSTGRES_PASSWORD: 'x',
      RABBITMQ_DEFAULT_USER: 'trawl',
      RABBITMQ_DEFAULT_PASS: 'x',
    });
    expect(r.code, r.stderr).not.toBe(0);
    expect(r.code).not.toBeNull();
    expect(r.stderr).toContain('API_GATEWAY_PORT');
    if (!main.includes('mail-orchestrator')) expect(r.stderr).toContain('DATABASE_URL');
    if (main.includes('api-gateway')) expect(r.stderr).toContain('SECRET_KEY');
    expect(r.stderr).not.toMatch(/\n\s+at /); // a list of problems, not a stack trace
  });
});

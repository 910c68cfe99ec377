import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FILE_SECRET_VARIABLES, SECRET_VARIABLES } from '../../src/defaults.ts';
import type { ConfigError } from '../../src/errors.ts';
import { loadConfig } from '../../src/load-config.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function secretsDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-secrets-'));
  dirs.push(dir);
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return dir;
}

const load = (env: Record<string, string>, rootDir?: string) =>
  loadConfig({ env, envFile: false, ...(rootDir ? { rootDir } : {}) });

function problems(env: Record<string, string>, rootDir?: string) {
  try {
    load(env, rootDir);
  } catch (e) {
    return (e as ConfigError).problems.map((p) => `${p.variable}: ${p.message}`);
  }
  return [];
}

describe('secrets readable from files (NAME_FILE)', () => {
  it('covers every secret setting', () => {
    const passwords = SECRET_VARIABLES.filter((n) => /KEY|PASS|URL|RETRIEVERS/.test(n));
    expect([...FILE_SECRET_VARIABLES].sort()).toEqual([...passwords].sort());
  });

  it('reads each secret from its file in production (one trailing newline dropped)', () => {
    const d = secretsDir({
      secret_key: `${'s'.repeat(48)}\n`,
      internal_api_key: 'k'.repeat(48),
      postgres_password: 'pg pass\n',
      rabbitmq_password: 'mq:pass',
      redis_password: 'redis-pass',
      admin_password: 'Admin-password-1\n',
    });
    const c = load({
      APP_ENV: 'prod',
      POSTGRES_DB: 'trawl',
      POSTGRES_USER: 'trawl',
      RABBITMQ_DEFAULT_USER: 'trawl',
      SECRET_KEY_FILE: join(d, 'secret_key'),
      INTERNAL_API_KEY_FILE: join(d, 'internal_api_key'),
      POSTGRES_PASSWORD_FILE: join(d, 'postgres_password'),
      RABBITMQ_DEFAULT_PASS_FILE: join(d, 'rabbitmq_password'),
      REDIS_PASSWORD_FILE: join(d, 'redis_password'),
      TRAWL_ADMIN_PASSWORD_FILE: join(d, 'admin_password'),
    });
    expect(c.secretKey).toBe('s'.repeat(48));
    expect(c.secretKeyGenerated).toBe(false);
    expect(c.internalApiKey).toBe('k'.repeat(48));
    expect(c.database.password).toBe('pg pass');
    expect(c.database.url).toContain(encodeURIComponent('pg pass'));
    expect(c.rabbitmq.url).toContain(encodeURIComponent('mq:pass'));
    expect(c.redis.url).toContain('redis-pass');
    expect(c.auth.adminPassword).toBe('Admin-password-1');
  });

  it('reads whole URLs from files, relative paths against the root', () => {
    const d = secretsDir({
      db: 'postgres://u:p@db.example:5432/trawl\n',
      mq: 'amqp://u:p@mq.example:5672/',
      rd: 'redis://:p@rd.example:6379/0',
    });
    const c = load(
      {
        APP_ENV: 'dev',
        DATABASE_URL_FILE: 'db',
        RABBITMQ_URL_FILE: 'mq',
        REDIS_URL_FILE: 'rd',
      },
      d,
    );
    expect(c.database.url).toBe('postgres://u:p@db.example:5432/trawl');
    expect(c.rabbitmq.url).toMatch(/^amqp:\/\/u:p@mq\.example:5672/);
    expect(c.redis.url).toMatch(/^redis:\/\/:p@rd\.example:6379/);
  });

  it('takes an empty file as unset, like an empty variable (production still asks for it)', () => {
    const d = secretsDir({ empty: '\n' });
    expect(load({ APP_ENV: 'dev', REDIS_PASSWORD_FILE: join(d, 'empty') }).redis.password).toBe(
      undefined,
    );
    expect(problems({ APP_ENV: 'prod', SECRET_KEY_FILE: join(d, 'empty') })).toContain(
      'SECRET_KEY: must be set in production (APP_ENV=prod): it signs the access tokens',
    );
  });

  it('refuses both forms and a missing file, never quoting a secret', () => {
    const d = secretsDir({ empty: '\n', key: 'top-secret-value' });
    const found = problems({
      APP_ENV: 'dev',
      SECRET_KEY: 'also-set',
      SECRET_KEY_FILE: join(d, 'key'),
      POSTGRES_PASSWORD_FILE: join(d, 'absent'),
    });
    expect(found).toEqual([
      'SECRET_KEY_FILE: set SECRET_KEY or SECRET_KEY_FILE, not both',
      `POSTGRES_PASSWORD_FILE: cannot read ${join(d, 'absent')} (ENOENT)`,
    ]);
    expect(found.join('\n')).not.toContain('top-secret-value');
  });

  it('keeps TRAWL_RETRIEVER_KEY_FILE working as before', () => {
    const d = secretsDir({ rk: 'trawl1.retriever.abc\n' });
    expect(load({ APP_ENV: 'dev', TRAWL_RETRIEVER_KEY_FILE: join(d, 'rk') }).retrieverKey).toBe(
      'trawl1.retriever.abc',
    );
  });
});

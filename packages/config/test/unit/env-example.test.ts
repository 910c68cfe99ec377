import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFAULTS, ENV_VARIABLE_NAMES } from '../../src/defaults.ts';
import { parseDotenv } from '../../src/dotenv.ts';
import type { ConfigError } from '../../src/errors.ts';
import { loadConfig } from '../../src/load-config.ts';
import { corpusDir, findRepoRoot } from '../../src/repo-root.ts';
import { TEST_INFRA_DEFAULTS, testInfra } from '../../src/test-infra.ts';

const root = findRepoRoot(dirname(fileURLToPath(import.meta.url)));
const example = join(root, '.env.example');
const docs = join(root, 'docs', 'configuration.md');

describe('.env.example and docs/configuration.md', () => {
  it.skipIf(!existsSync(example))('.env.example lists every variable and parses cleanly', () => {
    const { values, invalidLines } = parseDotenv(readFileSync(example, 'utf8'));
    expect(invalidLines).toEqual([]);
    const missing = ENV_VARIABLE_NAMES.filter((n) => !(n in values));
    expect(missing).toEqual([]);
    for (const [k, v] of Object.entries(DEFAULTS)) {
      if (typeof v === 'number' || typeof v === 'boolean') expect(values[k], k).toBe(String(v));
    }
  });

  it.skipIf(!existsSync(example))('.env.example is a valid dev configuration', () => {
    const c = loadConfig({ env: { APP_ENV: 'dev' }, rootDir: root, envFile: example });
    expect(c.gateway.port).toBe(8001);
  });

  it.skipIf(!existsSync(example))('.env.example in prod asks for the secrets only', () => {
    try {
      loadConfig({ env: {}, rootDir: root, envFile: example });
      expect.unreachable();
    } catch (e) {
      expect((e as ConfigError).problems.map((p) => p.variable)).toEqual([
        'SECRET_KEY',
        'POSTGRES_PASSWORD',
        'RABBITMQ_DEFAULT_PASS',
      ]);
    }
  });

  it.skipIf(!existsSync(docs))('docs/configuration.md documents every variable', () => {
    const text = readFileSync(docs, 'utf8');
    expect(ENV_VARIABLE_NAMES.filter((n) => !text.includes(`\`${n}\``))).toEqual([]);
  });
});

describe('testInfra, findRepoRoot, corpusDir', () => {
  it('gives the documented defaults and honours the variables', () => {
    expect(testInfra({})).toEqual(TEST_INFRA_DEFAULTS);
    expect(TEST_INFRA_DEFAULTS.databaseUrl).toBe('postgres://postgres@127.0.0.1:5432/trawl_test');
    expect(testInfra({ TRAWL_TEST_REDIS_URL: 'redis://h:1/2' }).redisUrl).toBe('redis://h:1/2');
  });

  it('finds the workspace root and the corpus beside it (or null)', () => {
    expect(existsSync(join(root, 'pnpm-workspace.yaml'))).toBe(true);
    const c = corpusDir(root);
    if (c !== null) expect(c).toBe(join(root, '..', 'shared', 'corpus'));
    expect(corpusDir('/nonexistent/repo')).toBeNull();
  });
});

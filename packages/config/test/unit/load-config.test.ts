import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { LoadConfigOptions } from '../../src/app-config.ts';
import { ConfigError } from '../../src/errors.ts';
import { loadConfig } from '../../src/load-config.ts';

const root = mkdtempSync(join(tmpdir(), 'trawl-config-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const DEV = { APP_ENV: 'dev' };
const PROD_OK = {
  APP_ENV: 'prod',
  SECRET_KEY: 'x'.repeat(32),
  POSTGRES_DB: 'trawl',
  POSTGRES_USER: 'trawl',
  POSTGRES_PASSWORD: 'pw',
  RABBITMQ_DEFAULT_USER: 'rabbit',
  RABBITMQ_DEFAULT_PASS: 'pw',
};

/** Loads with only the given variables (no .env unless `envFile` says so). */
function load(env: Record<string, string>, opts: Partial<LoadConfigOptions> = {}) {
  return loadConfig({ env, rootDir: root, envFile: false, ...opts });
}

function problemsOf(env: Record<string, string>, opts: Partial<LoadConfigOptions> = {}) {
  try {
    load(env, opts);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    const err = e as ConfigError;
    expect(err.code).toBe('TRAWL_ERR_CONFIG_INVALID');
    return err;
  }
  throw new Error('expected a ConfigError');
}

function variablesOf(env: Record<string, string>, opts: Partial<LoadConfigOptions> = {}) {
  return problemsOf(env, opts).problems.map((p) => p.variable);
}

describe('loadConfig defaults', () => {
  it('gives the documented defaults in dev', () => {
    const c = load(DEV);
    expect(c.appEnv).toBe('dev');
    expect(c.logLevel).toBe('info');
    expect(c.pinoLevel).toBe('info');
    expect(c.debug).toBe(false);
    expect(c.tz).toBe('UTC');
    expect(c.trustedHosts).toEqual(['localhost', '127.0.0.1']);
    expect(c.auth).toEqual({
      accessTokenExpireMinutes: 30,
      refreshTokenExpireDays: 7,
      adminUser: undefined,
      adminPassword: undefined,
    });
    expect(c.gateway).toEqual({
      host: '127.0.0.1',
      embeddedHost: '127.0.0.1',
      port: 8001,
      url: 'http://127.0.0.1:8001',
      cpuWorkers: { size: 2, inlineMaxBytes: 256 * 1024, deadlineMs: 10_000 },
    });
    expect(c.trustProxy).toBe(false);
    expect(c.retrieverImap).toEqual({ host: '127.0.0.1', port: 8200 });
    expect(c.retrieverSmtp).toEqual({ host: '127.0.0.1', port: 8201 });
    expect(c.mailOrchestratorHost).toBe('127.0.0.1');
    expect(c.orchestratorHost).toBe('127.0.0.1');
    expect(c.analyzersListenHost).toBe('127.0.0.1');
    expect(c.analyzersPort).toBe(8100);
    expect(c.mailOrchestratorPort).toBe(8002);
    expect(c.dataDir).toBe(join(root, 'data'));
    expect(c.configFile).toBe(join(root, 'config/service.yaml'));
    expect(c.workflowsFile).toBe(join(root, 'config/workflows.yaml'));
    expect(c.rateLimit).toEqual({ enabled: false, max: 100, windowSeconds: 60 });
    expect(c.limits).toEqual({
      jsonBodyBytes: 10 * 1024 * 1024,
      rawMessageBytes: 25 * 1024 * 1024,
      attachments: 100,
      recipients: 1000,
      subjectChars: 998,
      publicBodyBytes: 65536,
    });
    expect(c.audit).toEqual({ retentionDays: 365, failureWindowSeconds: 60 });
    expect(c.orchestrator).toEqual({
      prefetch: 16,
      shutdownGraceMs: 10_000,
      reaperIntervalMs: 15_000,
      jobGraceMs: 30_000,
      queuedMaxMs: 86_400_000,
    });
    expect(c.brokerPrefix).toBe('');
    expect(c.metrics).toBe(true);
    expect(c.mailRetrievers).toEqual({});
    expect(c.redis).toMatchObject({
      maxmemory: '256mb',
      maxmemoryPolicy: 'noeviction',
      password: undefined,
    });
    expect(c.rabbitmq).toMatchObject({ port: 5672, mgmtPort: 15672, vhost: '/' });
    expect(c.dev).toMatchObject({ mountMode: 'rw', dbuiPort: 8080, hostUid: 1000, hostGid: 1000 });
    expect(c.prod).toMatchObject({ registryPort: 5000, version: 'latest' });
    expect(c.secretKeyGenerated).toBe(true);
    expect(c.secretKey.length).toBeGreaterThanOrEqual(32);
  });

  it('is deep-frozen', () => {
    const c = load(DEV);
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.database)).toBe(true);
    expect(Object.isFrozen(c.trustedHosts)).toBe(true);
    expect(() => {
      (c.limits as { attachments: number }).attachments = 1;
    }).toThrow(TypeError);
  });
});

describe('precedence: env > .env > defaults', () => {
  it('takes the process environment over the .env file over the defaults', () => {
    const dir = mkdtempSync(join(root, 'prec-'));
    writeFileSync(
      join(dir, '.env'),
      '# project settings\nAPP_ENV=dev\nexport API_GATEWAY_PORT=9000\nTRAWL_ANALYZERS_PORT="9100"\n',
    );
    const c = loadConfig({ env: { API_GATEWAY_PORT: '9500' }, rootDir: dir });
    expect(c.gateway.port).toBe(9500); // env wins over .env
    expect(c.analyzersPort).toBe(9100); // .env wins over the default
    expect(c.mailOrchestratorPort).toBe(8002); // default
    expect(c.appEnv).toBe('dev');
    expect(c.gateway.url).toBe('http://127.0.0.1:9500');
  });

  it('treats an empty variable as unset', () => {
    expect(load({ ...DEV, API_GATEWAY_PORT: '' }).gateway.port).toBe(8001);
  });

  it('reports a malformed .env line with its line number', () => {
    const dir = mkdtempSync(join(root, 'bad-env-'));
    writeFileSync(join(dir, '.env'), 'APP_ENV=dev\nthis is wrong\n');
    try {
      loadConfig({ env: {}, rootDir: dir });
      expect.unreachable();
    } catch (e) {
      expect((e as ConfigError).problems).toEqual([
        { file: join(dir, '.env'), path: '', line: 2, message: 'not a KEY=value line' },
      ]);
    }
  });
});

describe('URLs built from parts', () => {
  it('percent-encodes users and passwords', () => {
    const c = load({
      ...DEV,
      POSTGRES_HOST: 'db.internal',
      POSTGRES_PORT: '6543',
      POSTGRES_DB: 'trawl db',
      POSTGRES_USER: 'us@er',
      POSTGRES_PASSWORD: 'p@ss:w/rd#?%',
      REDIS_HOST: 'cache',
      REDIS_PASSWORD: 'r p@ss',
      RABBITMQ_HOST: 'mq',
      RABBITMQ_DEFAULT_USER: 'rab:bit',
      RABBITMQ_DEFAULT_PASS: 'a/b@c',
      RABBITMQ_VHOST: 'trawl',
    });
    expect(c.database.url).toBe(
      'postgres://us%40er:p%40ss%3Aw%2Frd%23%3F%25@db.internal:6543/trawl%20db',
    );
    expect(c.database.explicit).toBe(false);
    expect(new URL(c.database.url).password).toBe(encodeURIComponent('p@ss:w/rd#?%'));
    expect(c.redis.url).toBe('redis://:r%20p%40ss@cache:6379');
    expect(c.rabbitmq.url).toBe('amqp://rab%3Abit:a%2Fb%40c@mq:5672/trawl');
    expect(c.rabbitmq.explicit).toBe(false);
  });

  it('encodes the default vhost / as %2F and omits an empty redis password', () => {
    const c = load(DEV);
    expect(c.rabbitmq.url).toBe('amqp://trawl:trawl-dev-password@127.0.0.1:5672/%2F');
    expect(c.redis.url).toBe('redis://127.0.0.1:6379');
    expect(c.database.url).toBe('postgres://trawl:trawl-dev-password@127.0.0.1:5432/trawl');
  });

  it('keeps explicit URLs and reads their parts', () => {
    const c = load({
      ...DEV,
      DATABASE_URL: 'postgresql://al%40ice:s%3Acret@pg:5433/main',
      REDIS_URL: 'rediss://:pw@redis.example:6380/2',
      RABBITMQ_URL: 'amqps://bob:pw@mq.example/prod',
    });
    expect(c.database).toMatchObject({
      url: 'postgresql://al%40ice:s%3Acret@pg:5433/main',
      explicit: true,
      host: 'pg',
      port: 5433,
      db: 'main',
      user: 'al@ice',
      password: 's:cret',
    });
    expect(c.redis).toMatchObject({
      explicit: true,
      host: 'redis.example',
      port: 6380,
      password: 'pw',
    });
    expect(c.rabbitmq).toMatchObject({
      explicit: true,
      host: 'mq.example',
      port: 5671,
      user: 'bob',
      vhost: 'prod',
    });
  });
});

describe('validation rules', () => {
  const cases: Array<[string, string, string, RegExp]> = [
    // [variable, valid value, invalid value, message]
    ['DATABASE_URL', 'postgres://u@h/db', 'mysql://u@h/db', /postgres:\/\//],
    ['DATABASE_URL', 'postgresql://u@h:5432/db', 'not a url', /postgres:\/\//],
    ['REDIS_URL', 'redis://h:6379', 'http://h:6379', /redis:\/\//],
    ['RABBITMQ_URL', 'amqp://u:p@h:5672/v', 'amqp:nohost', /amqp:\/\//],
    ['TRAWL_GATEWAY_URL', 'https://gw.example', 'ftp://gw.example', /http\(s\) URL/],
    ['API_GATEWAY_PORT', '65535', '70000', /between 1 and 65535/],
    ['POSTGRES_PORT', '1', '0', /between 1 and 65535/],
    ['REDIS_PORT', '6380', 'abc', /between 1 and 65535/],
    ['RABBITMQ_MGMT_PORT', '15673', '-1', /between 1 and 65535/],
    ['DBUI_PORT', '8081', '8080.5', /between 1 and 65535/],
    ['APP_ENV', 'test', 'staging', /one of prod, dev, test/],
    ['LOG_LEVEL', 'warning', 'verbose', /one of debug, info, warning, error/],
    ['REDIS_MAXMEMORY_POLICY', 'noeviction', 'lru', /one of/],
    ['MOUNT_MODE', 'ro', 'rx', /one of rw, ro/],
    ['DEBUG', 'yes', 'maybe', /boolean/],
    ['ENABLE_RATE_LIMITING', '1', 'enabled', /boolean/],
    ['TRAWL_METRICS', 'no', '2', /boolean/],
    ['TRAWL_RATE_LIMIT_MAX', '5', '5.5', /integer/],
    ['TRAWL_MAX_ATTACHMENTS', '0', '-3', /at least 0/],
    ['ACCESS_TOKEN_EXPIRE_MINUTES', '15', '0', /at least 1/],
    ['TRAWL_ORCHESTRATOR_PREFETCH', '1', '1e3', /integer/],
    ['REDIS_MAXMEMORY', '1gb', 'lots', /size/],
    ['TZ', 'Europe/Paris', 'Mars/Olympus', /time zone/],
    ['TRAWL_BROKER_PREFIX', 'ci-42', 'has space', /letters, digits/],
    ['TRAWL_RETRIEVER_IMAP_PORT', '8201', '0', /between 1 and 65535/],
    ['TRUST_PROXY', '10.0.0.0/8, 192.0.2.7', 'proxy.example', /proxy addresses \/ CIDR ranges/],
    ['TRUST_PROXY', 'true', '10.0.0.0/33', /CIDR/],
    ['TRUST_PROXY', '2', '64', /at most 32 proxy hops/],
    [
      'TRAWL_MAIL_RETRIEVERS',
      '{"imap":{"url":"http://127.0.0.1:8200","priority":2}}',
      '{"imap":',
      /JSON/,
    ],
    [
      'TRAWL_MAIL_RETRIEVERS',
      '{}',
      '{"imap":{"url":"ftp://x"}}',
      /\/imap\/url: must be an http\(s\) URL/,
    ],
  ];
  for (const [name, good, bad, message] of cases) {
    it(`${name}: accepts ${JSON.stringify(good)}, refuses ${JSON.stringify(bad)}`, () => {
      expect(() => load({ ...DEV, [name]: good })).not.toThrow();
      const err = problemsOf({ ...DEV, [name]: bad });
      expect(err.problems).toHaveLength(1);
      expect(err.problems[0]?.variable).toBe(name);
      expect(err.problems[0]?.message).toMatch(message);
      expect(err.message).toContain(`${name}: `);
    });
  }

  it('reads booleans and log levels case-insensitively', () => {
    const c = load({ ...DEV, DEBUG: 'TRUE', LOG_LEVEL: 'WARNING', ENABLE_RATE_LIMITING: 'Yes' });
    expect(c.debug).toBe(true);
    expect(c.logLevel).toBe('warning');
    expect(c.pinoLevel).toBe('warn');
    expect(c.rateLimit.enabled).toBe(true);
    expect(load({ ...DEV, LOG_LEVEL: 'Debug' }).logLevel).toBe('debug');
  });

  it('parses retrievers with the contracts schema (defaults applied)', () => {
    const c = load({ ...DEV, TRAWL_MAIL_RETRIEVERS: '{"imap":{"url":"http://127.0.0.1:8200"}}' });
    expect(c.mailRetrievers).toEqual({
      imap: { url: 'http://127.0.0.1:8200', priority: 0, enabled: true },
    });
  });

  it('reads TRUST_PROXY as off, on, a hop count or proxy addresses', () => {
    expect(load({ ...DEV, TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(load({ ...DEV, TRUST_PROXY: '0' }).trustProxy).toBe(false);
    expect(load({ ...DEV, TRUST_PROXY: 'TRUE' }).trustProxy).toBe(true);
    expect(load({ ...DEV, TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(load({ ...DEV, TRUST_PROXY: '127.0.0.1, 10.0.0.0/8,loopback,::1' }).trustProxy).toEqual([
      '127.0.0.1',
      '10.0.0.0/8',
      'loopback',
      '::1',
    ]);
  });

  it('every listener on 127.0.0.1 unless its own host setting says otherwise (issue 28)', () => {
    const c = load(DEV);
    expect(c.gateway).toMatchObject({ host: '127.0.0.1', embeddedHost: '127.0.0.1' });
    expect(load({ ...DEV, TRAWL_HOST: '0.0.0.0' }).gateway).toMatchObject({
      host: '0.0.0.0',
      embeddedHost: '0.0.0.0',
    });
    expect(load({ ...DEV, TRAWL_HOST: '192.0.2.10' }).gateway.embeddedHost).toBe('192.0.2.10');
    // the gateway's address is its own: the mail orchestrator (embedded too) does not take it
    const open = load({ ...DEV, TRAWL_HOST: '0.0.0.0' });
    expect(open.mailOrchestratorHost).toBe('127.0.0.1');
    expect(open.orchestratorHost).toBe('127.0.0.1');
    expect(open.analyzersListenHost).toBe('127.0.0.1');
    const own = load({
      ...DEV,
      TRAWL_MAIL_ORCHESTRATOR_HOST: '192.0.2.11',
      TRAWL_ORCHESTRATOR_HOST: '192.0.2.12',
      TRAWL_ANALYZERS_LISTEN_HOST: '192.0.2.13',
      TRAWL_RETRIEVER_IMAP_HOST: '192.0.2.14',
      TRAWL_RETRIEVER_SMTP_HOST: '192.0.2.15',
    });
    expect([
      own.mailOrchestratorHost,
      own.orchestratorHost,
      own.analyzersListenHost,
      own.retrieverImap.host,
      own.retrieverSmtp.host,
    ]).toEqual(['192.0.2.11', '192.0.2.12', '192.0.2.13', '192.0.2.14', '192.0.2.15']);
  });

  it('splits TRUSTED_HOSTS on commas', () => {
    expect(load({ ...DEV, TRUSTED_HOSTS: ' a.example , b.example,,' }).trustedHosts).toEqual([
      'a.example',
      'b.example',
    ]);
  });

  it('reports every problem at once, one line per variable', () => {
    const err = problemsOf({
      ...DEV,
      DATABASE_URL: 'mysql://x@y/z',
      API_GATEWAY_PORT: '70000',
      DEBUG: 'perhaps',
      LOG_LEVEL: 'loud',
      REDIS_URL: 'redis//broken',
    });
    expect(err.problems.map((p) => p.variable).sort()).toEqual(
      ['API_GATEWAY_PORT', 'DATABASE_URL', 'DEBUG', 'LOG_LEVEL', 'REDIS_URL'].sort(),
    );
    const lines = err.message.split('\n');
    expect(lines).toHaveLength(6);
    expect(err.message).toContain('DATABASE_URL: must be a postgres:// or postgresql:// URL');
    expect(err.message).toContain(
      'API_GATEWAY_PORT: must be a port number between 1 and 65535 (got "70000")',
    );
  });

  it('never prints a secret value', () => {
    const err = problemsOf({
      ...DEV,
      DATABASE_URL: 'mysql://user:hunter2-secret@h/db',
      RABBITMQ_URL: 'http://u:hunter2-secret@h',
      TRAWL_MAIL_RETRIEVERS: '{"x":{"url":"ftp://hunter2-secret"}}',
    });
    expect(err.problems).toHaveLength(3);
    expect(err.message).not.toContain('hunter2');
    expect(JSON.stringify(err.problems)).not.toContain('hunter2');
  });
});

describe('production requirements', () => {
  it('accepts a complete production configuration', () => {
    const c = load(PROD_OK);
    expect(c.appEnv).toBe('prod');
    expect(c.secretKeyGenerated).toBe(false);
  });

  it('requires APP_ENV, SECRET_KEY, POSTGRES_* and RABBITMQ_* to be set in prod', () => {
    expect(variablesOf({})).toEqual([
      'APP_ENV',
      'SECRET_KEY',
      'POSTGRES_DB',
      'POSTGRES_USER',
      'POSTGRES_PASSWORD',
      'RABBITMQ_DEFAULT_USER',
      'RABBITMQ_DEFAULT_PASS',
    ]);
  });

  it('requires only what the service needs', () => {
    const { RABBITMQ_DEFAULT_USER: _u, RABBITMQ_DEFAULT_PASS: _p, ...noRabbit } = PROD_OK;
    expect(() => load(noRabbit, { needs: { rabbitmq: false } })).not.toThrow();
    expect(variablesOf(noRabbit)).toEqual(['RABBITMQ_DEFAULT_USER', 'RABBITMQ_DEFAULT_PASS']);
    const { SECRET_KEY: _s, ...noKey } = PROD_OK;
    expect(() => load(noKey, { needs: { secretKey: false } })).not.toThrow();
  });

  it('lets an explicit URL satisfy its parts', () => {
    const {
      POSTGRES_DB: _d,
      POSTGRES_USER: _u,
      POSTGRES_PASSWORD: _p,
      RABBITMQ_DEFAULT_USER: _ru,
      RABBITMQ_DEFAULT_PASS: _rp,
      ...rest
    } = PROD_OK;
    const c = load({
      ...rest,
      DATABASE_URL: 'postgres://app:pw@db/trawl',
      RABBITMQ_URL: 'amqp://app:pw@mq/trawl',
    });
    expect(c.database.explicit).toBe(true);
    expect(c.rabbitmq.explicit).toBe(true);
  });

  it('refuses a SECRET_KEY shorter than 32 bytes in prod, not in dev', () => {
    const err = problemsOf({ ...PROD_OK, SECRET_KEY: 'short-secret' });
    expect(err.problems.map((p) => p.variable)).toEqual(['SECRET_KEY']);
    expect(err.message).toContain('at least 32 bytes');
    expect(err.message).not.toContain('short-secret');
    expect(load({ ...DEV, SECRET_KEY: 'short-secret' }).secretKey).toBe('short-secret');
  });

  it('does not require production variables in dev or test', () => {
    expect(() => load({ APP_ENV: 'test' })).not.toThrow();
  });
});

describe('paths and extras', () => {
  it('resolves relative files against the root and keeps absolute ones', () => {
    const c = load({
      ...DEV,
      TRAWL_CONFIG_FILE: 'etc/s.yaml',
      TRAWL_WORKFLOWS_FILE: '/abs/w.yaml',
      TRAWL_DATA_DIR: '/var/lib/trawl',
    });
    expect(c.configFile).toBe(join(root, 'etc/s.yaml'));
    expect(c.workflowsFile).toBe('/abs/w.yaml');
    expect(c.dataDir).toBe('/var/lib/trawl');
  });

  it('falls back from VCS_TOKEN to CI_JOB_TOKEN', () => {
    expect(load({ ...DEV, CI_JOB_TOKEN: 'job' }).ci.vcsToken).toBe('job');
    expect(load({ ...DEV, CI_JOB_TOKEN: 'job', VCS_TOKEN: 'own' }).ci.vcsToken).toBe('own');
  });
});

import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { diffFiles } from '@trawl/config';
import type { AnalyzerAnswer, Topology } from '@trawl/contracts';
import type { Broker, Cache, SqlClient, Store } from '@trawl/platform';
import type { CompiledWorkflow } from '@trawl/workflow-engine';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from '../../src/app.ts';
import { hashPassword } from '../../src/auth/passwords.ts';
import { loadSnapshot } from '../../src/config-loader.ts';
import { type ConfigState, createConfigState } from '../../src/config-state.ts';
import type { GatewayDeps, PluginInvoker } from '../../src/deps.ts';
import { defaultGatewayOptions, type GatewayOptions } from '../../src/options.ts';
import { checkAgainstOpenApi, type OpenApiCheck } from './openapi-check.ts';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');
export const SECRET = 'test-secret-key-0123456789abcdef0123456789';
export const INTERNAL_KEY = 'internal-key-for-tests-0123456789';
export const PASSWORD = 'correct horse battery staple';

export interface PlatformParts {
  store: Store;
  cache: Cache;
  broker: Broker;
  topology: Topology;
}

/** Copies the fixture configuration into a fresh temporary folder (reload tests edit it). */
export function configDir(): {
  dir: string;
  configFile: string;
  workflowsFile: string;
  remove(): void;
} {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-gw-'));
  copyFileSync(join(FIXTURES, 'service.yaml'), join(dir, 'service.yaml'));
  copyFileSync(join(FIXTURES, 'workflows.yaml'), join(dir, 'workflows.yaml'));
  return {
    dir,
    configFile: join(dir, 'service.yaml'),
    workflowsFile: join(dir, 'workflows.yaml'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A stand-in for the analyzers (the plugins are not what these tests are about). */
const fakeInvoker: PluginInvoker = {
  async analyze(id): Promise<AnalyzerAnswer> {
    return {
      is_phishing: true,
      confidence: 0.8,
      summary: `${id} says phishing`,
      indicators: [{ type: 'urgency_language', value: 'at once', confidence: 0.7 }],
    };
  },
  async enrich(id) {
    return { provider_id: id, data: {} };
  },
  async health() {
    return { ok: true, latency_ms: 1 };
  },
};

export interface Gateway {
  app: FastifyInstance;
  configState: ConfigState<CompiledWorkflow>;
  cfg: ReturnType<typeof configDir>;
  options: GatewayOptions;
  /** Answers that /openapi.json does not describe (close() fails on any). */
  openapi: OpenApiCheck;
  close(): Promise<void>;
}

export async function startGateway(
  p: PlatformParts,
  opts: {
    config?: Partial<GatewayOptions>;
    cfg?: ReturnType<typeof configDir>;
    invoker?: PluginInvoker;
    logger?: Logger;
    /** Optional dependencies of the app (feedback learning, issue 17). */
    deps?: Pick<GatewayDeps, 'learnFeedback' | 'forgetTeacher'>;
  } = {},
): Promise<Gateway> {
  const cfg = opts.cfg ?? configDir();
  const files = { configFile: cfg.configFile, workflowsFile: cfg.workflowsFile };
  const configState = createConfigState<CompiledWorkflow>({
    initial: loadSnapshot(files),
    load: () => loadSnapshot(files),
    diff: diffFiles,
    store: p.store,
    broker: p.broker,
    topology: p.topology,
  });
  await configState.recordCurrent(null);
  const options = defaultGatewayOptions({
    secretKey: SECRET,
    internalApiKey: INTERNAL_KEY,
    ...opts.config,
  });
  const app = await buildApp({
    config: options,
    store: p.store,
    broker: p.broker,
    cache: p.cache,
    topology: p.topology,
    configState,
    invoker: opts.invoker ?? fakeInvoker,
    ...(opts.logger ? { logger: opts.logger } : {}),
    ...opts.deps,
    version: '0.1.0-test',
  });
  // every answer of every gateway test is checked against /openapi.json (issue 32)
  const openapi = checkAgainstOpenApi(app);
  await app.ready();
  return {
    app,
    configState,
    cfg,
    options,
    openapi,
    async close() {
      await app.close();
      if (!opts.cfg) cfg.remove();
      if (openapi.violations.length > 0) {
        throw new Error(
          `answers that /openapi.json does not describe:\n${[...new Set(openapi.violations)].join('\n')}`,
        );
      }
    },
  };
}

let cachedHash: Promise<string> | undefined;

/** Creates viewer, analyst and admin users (one scrypt hash shared: tests stay fast). */
export async function seedUsers(store: Store): Promise<void> {
  cachedHash ??= hashPassword(PASSWORD);
  const password_hash = await cachedHash;
  for (const role of ['viewer', 'analyst', 'admin'] as const) {
    if (!(await store.users.get(role)))
      await store.users.create({ username: role, password_hash, roles: [role] });
  }
}

export async function login(
  app: FastifyInstance,
  username: string,
  password = PASSWORD,
): Promise<{ access_token: string; refresh_token: string }> {
  const r = await app.inject({
    method: 'POST',
    url: '/auth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ grant_type: 'password', username, password }).toString(),
  });
  if (r.statusCode !== 200) throw new Error(`login ${username}: ${r.statusCode} ${r.body}`);
  return r.json();
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** PostgreSQL (own schema), Redis (own prefix) and the broker, each cleaned up by `cleanup`. */
export interface RealPlatform extends PlatformParts {
  sqlSchema: string;
  /** The schema's SQL client, to look at rows directly. */
  sql: SqlClient;
  redisPrefix: string;
  /** A second cache client on the same Redis prefix (another replica). */
  secondCache(): Cache;
  cleanup(): Promise<void>;
}

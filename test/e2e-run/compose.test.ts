import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEV_ONLY_VARIABLES } from '@trawl/config';
import { beforeAll, describe, expect, it } from 'vitest';
import { importVia, ROOT } from './helpers.ts';

/**
 * There is no Docker engine here: the compose files and the Dockerfile are checked statically against
 * the configuration package (the variables it reads) and .env.example (every ${VAR} documented).
 */

// Variables the image reads besides @trawl/config (docker/entrypoint.sh; docs/configuration.md).
const SERVICE_OWN = new Set(['TRAWL_SERVICE']);
const TRAWL_SERVICES = ['api-gateway', 'analyzer-orchestrator', 'mail-orchestrator', 'analyzers'];
const INFRA = ['postgres', 'redis', 'rabbitmq'];
const DEV_ONLY = DEV_ONLY_VARIABLES;

interface Service {
  image?: string;
  command?: string[] | string;
  environment?: Record<string, string | number | boolean | null>;
  ports?: string[];
  container_name?: string;
  healthcheck?: { test: string[] | string };
  depends_on?: Record<string, { condition: string }>;
}
interface Compose {
  services: Record<string, Service>;
}

let parseYaml: (text: string, opts: { merge: boolean }) => unknown;
let knownVars: Set<string>;
let envExample: Record<string, string>;
const read = (f: string) => readFileSync(join(ROOT, f), 'utf8');
const prodText = read('docker-compose.yml');
const devText = read('docker-compose.dev.yml');
let prod: Compose;
let dev: Compose;

/** ${VAR}, ${VAR:-default}, ${VAR:?message}; `$${...}` is an escape for the container's shell. */
function references(text: string): { name: string; def: string | undefined }[] {
  const out: { name: string; def: string | undefined }[] = [];
  for (const m of text.matchAll(/(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?([-?])([^}]*))?\}/g)) {
    out.push({ name: m[1] as string, def: m[2] === '-' ? m[3] : undefined });
  }
  return out;
}

beforeAll(async () => {
  ({ parse: parseYaml } = await importVia<{ parse: typeof parseYaml }>('packages/cli', 'yaml'));
  const config = await importVia<{
    ENV_VARIABLE_NAMES: readonly string[];
    parseDotenv: (t: string) => { values: Record<string, string> };
  }>('services/all-in-one', '@trawl/config');
  knownVars = new Set(config.ENV_VARIABLE_NAMES);
  envExample = config.parseDotenv(read('.env.example')).values;
  prod = parseYaml(prodText, { merge: true }) as Compose;
  dev = parseYaml(devText, { merge: true }) as Compose;
});

describe('docker-compose.yml and docker-compose.dev.yml', () => {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: compose syntax, not a template
  it('document every ${VAR} they use in .env.example', () => {
    const missing = [...references(prodText), ...references(devText)]
      .map((r) => r.name)
      .filter((n) => !(n in envExample));
    expect([...new Set(missing)]).toEqual([]);
  });

  it('use the same defaults as .env.example (the dev file may differ: it is for development)', () => {
    const differ: string[] = [];
    for (const r of references(prodText)) {
      const example = envExample[r.name];
      // An empty value counts as unset (the code default applies), so `${VAR:-}` always agrees.
      if (r.def === undefined || r.def === '' || example === undefined || example === '') continue;
      if (r.def !== example) differ.push(`${r.name}: compose ${r.def} vs .env.example ${example}`);
    }
    expect(differ).toEqual([]);
  });

  it('give the Trawl services only variables the configuration package reads', () => {
    const unknown: string[] = [];
    for (const file of [prod, dev]) {
      for (const [name, svc] of Object.entries(file.services)) {
        if (!TRAWL_SERVICES.includes(name)) continue;
        for (const v of Object.keys(svc.environment ?? {}))
          if (!knownVars.has(v) && !SERVICE_OWN.has(v)) unknown.push(`${name}: ${v}`);
      }
    }
    expect(unknown).toEqual([]);
  });

  it('pass the image variables of PostgreSQL, Redis and RabbitMQ under the names config reads', () => {
    for (const name of INFRA) {
      for (const v of Object.keys(prod.services[name]?.environment ?? {}))
        expect(knownVars.has(v), `${name}: ${v}`).toBe(true);
    }
    expect(prod.services.redis?.command?.toString()).toMatch(
      /--maxmemory "\$\$\{REDIS_MAXMEMORY\}"/,
    );
    expect(prod.services.redis?.command?.toString()).toMatch(
      /--maxmemory-policy "\$\$\{REDIS_MAXMEMORY_POLICY\}"/,
    );
    expect(prod.services.redis?.command?.toString()).toContain('REDIS_PASSWORD:+--requirepass');
    expect(prod.services.rabbitmq?.image).toMatch(/management/);
  });

  it('have every service of the stack, the orchestrator scalable', () => {
    for (const s of [...TRAWL_SERVICES, ...INFRA]) expect(prod.services[s], s).toBeDefined();
    const orch = prod.services['analyzer-orchestrator'] as Service;
    expect(orch.container_name).toBeUndefined();
    expect(orch.ports ?? []).toEqual([]);
  });

  it('health-check every service and wait on healthy dependencies only', () => {
    for (const [name, svc] of Object.entries(prod.services)) {
      expect(svc.healthcheck, `${name} has a healthcheck`).toBeDefined();
      for (const [dep, d] of Object.entries(svc.depends_on ?? {})) {
        expect(prod.services[dep], `${name} depends on ${dep}`).toBeDefined();
        expect(d.condition, `${name} → ${dep}`).toBe('service_healthy');
      }
    }
  });

  it('check each Trawl service on the port it listens on', () => {
    // docker/healthcheck.mjs reads the port variable of the service named by TRAWL_SERVICE.
    const script = read('docker/healthcheck.mjs');
    const portVar: Record<string, string> = {
      'api-gateway': 'API_GATEWAY_PORT',
      'analyzer-orchestrator': 'TRAWL_ORCHESTRATOR_PORT',
      'mail-orchestrator': 'TRAWL_MAIL_ORCHESTRATOR_PORT',
      analyzers: 'TRAWL_ANALYZERS_PORT',
    };
    for (const s of TRAWL_SERVICES) {
      const svc = prod.services[s] as Service;
      expect(svc.environment?.TRAWL_SERVICE, s).toBe(s);
      expect(svc.command, s).toEqual([s]);
      const v = portVar[s] as string;
      expect(script).toContain(`'${s}': process.env.${v}`.replace(`'analyzers'`, 'analyzers'));
      expect(svc.environment?.[v], `${s} sets ${v}`).toBeDefined();
      expect(JSON.stringify(svc.healthcheck?.test)).toContain('docker/healthcheck.mjs');
    }
    // The gateway publishes the port it listens on.
    const gw = prod.services['api-gateway'] as Service;
    // biome-ignore lint/suspicious/noTemplateCurlyInString: compose syntax, not a template
    expect(gw.ports).toEqual(['${API_GATEWAY_PORT:-8001}:${API_GATEWAY_PORT:-8001}']);
  });

  it('publish distinct host ports, the servers on 127.0.0.1 only', () => {
    const seen = new Map<string, string>();
    for (const file of [prod, dev]) {
      for (const [name, svc] of Object.entries(file.services)) {
        for (const p of svc.ports ?? []) {
          // host[:port]:container, where either side may be ${VAR:-default}.
          const m = p.match(/^(.*):(\d+|\$\{[^}]+\})$/);
          expect(m, `${name}: ${p}`).not.toBeNull();
          const host = m?.[1] as string;
          const container = m?.[2] as string;
          const key = host.replace(/^127\.0\.0\.1:/, '');
          expect(seen.has(key), `${name} and ${seen.get(key)} both publish ${key}`).toBe(false);
          seen.set(key, name);
          if (INFRA.includes(name) || name === 'mailcatcher' || name === 'dbui')
            expect(host.startsWith('127.0.0.1:'), `${name} ${p}`).toBe(true);
          expect(container).toMatch(/^(\d+|\$\{API_GATEWAY_PORT:-8001\})$/);
        }
      }
    }
    const pg = (prod.services.postgres as Service).ports ?? [];
    // biome-ignore lint/suspicious/noTemplateCurlyInString: compose syntax, not a template
    expect(pg).toEqual(['127.0.0.1:${POSTGRES_PORT:-5432}:5432']);
  });

  it('use every dev-only variable of the spec in the dev file', () => {
    const used = new Set(references(devText).map((r) => r.name));
    expect(DEV_ONLY.filter((v) => !used.has(v))).toEqual([]);
    for (const s of ['api-gateway', 'analyzer-orchestrator', 'mail-orchestrator'])
      expect(dev.services[s]?.environment?.APP_ENV, s).toBe('dev');
  });
});

describe('docker/Dockerfile', () => {
  const text = read('docker/Dockerfile');
  it('is multi-stage, runs as a non-root user and has a health check', () => {
    expect((text.match(/^FROM /gm) ?? []).length).toBeGreaterThanOrEqual(3);
    const user = text.match(/^USER (\S+)/m)?.[1];
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^(root|0)(:|$)/);
    expect(text).toMatch(/^HEALTHCHECK .*\n?.*docker\/healthcheck\.mjs/m);
    expect(text).toContain('--frozen-lockfile');
  });

  it('knows every service of the compose file', () => {
    const entry = read('docker/entrypoint.sh');
    for (const s of TRAWL_SERVICES) expect(entry).toContain(s);
  });
});

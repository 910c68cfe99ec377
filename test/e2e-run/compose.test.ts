import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hostAllowed } from '@trawl/api-gateway';
import {
  type AppConfig,
  DEV_ONLY_VARIABLES,
  FILE_SECRET_VARIABLES,
  loadConfig,
  SECRET_VARIABLES,
} from '@trawl/config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importVia, ROOT } from './helpers.ts';

/**
 * There is no Docker engine here: the compose files and the Dockerfile are checked statically against
 * the configuration package (the variables it reads) and .env.example (every ${VAR} documented).
 */

// Variables the image reads besides @trawl/config (docker/entrypoint.sh; docs/configuration.md).
const SERVICE_OWN = new Set(['TRAWL_SERVICE']);
const TRAWL_SERVICES = [
  'api-gateway',
  'analyzer-orchestrator',
  'mail-orchestrator',
  'analyzers',
  'retriever-imap',
  'retriever-smtp',
  'retriever-graph',
  'retriever-gmail',
];

/**
 * The port each service listens on, as its code reads it: the file whose settings give listen()
 * its port and the expression there, and the same value taken from the configuration.
 */
const LISTENS_ON: Record<string, { file: string; expr: string; port: (c: AppConfig) => number }> = {
  'api-gateway': {
    file: 'services/api-gateway/src/assembly.ts',
    expr: 'port: cfg.gateway.port',
    port: (c) => c.gateway.port,
  },
  'all-in-one': {
    file: 'services/all-in-one/src/embedded.ts',
    expr: 'opts.port ?? cfg.gateway.port',
    port: (c) => c.gateway.port,
  },
  'analyzer-orchestrator': {
    file: 'services/analyzer-orchestrator/src/settings.ts',
    expr: 'port: cfg.orchestratorPort',
    port: (c) => c.orchestratorPort,
  },
  'mail-orchestrator': {
    file: 'services/mail-orchestrator/src/assembly.ts',
    expr: 'port: cfg.mailOrchestratorPort',
    port: (c) => c.mailOrchestratorPort,
  },
  analyzers: {
    file: 'services/analyzers/src/assembly.ts',
    expr: 'port: cfg.analyzersPort',
    port: (c) => c.analyzersPort,
  },
  'retriever-imap': {
    file: 'services/retriever-imap/src/start.ts',
    expr: 'port: cfg.retrieverImap.port',
    port: (c) => c.retrieverImap.port,
  },
  'retriever-smtp': {
    file: 'services/retriever-smtp/src/start.ts',
    expr: 'port: cfg.retrieverSmtp.port',
    port: (c) => c.retrieverSmtp.port,
  },
  'retriever-graph': {
    file: 'services/retriever-graph/src/settings.ts',
    expr: 'port: cfg.retrieverGraph.port',
    port: (c) => c.retrieverGraph.port,
  },
  'retriever-gmail': {
    file: 'services/retriever-gmail/src/settings.ts',
    expr: 'port: cfg.retrieverGmail.port',
    port: (c) => c.retrieverGmail.port,
  },
};

/** Values for the `${VAR:?message}` variables, long enough for production's checks. */
const REQUIRED = {
  SECRET_KEY: 's'.repeat(48),
  INTERNAL_API_KEY: 'k'.repeat(48),
  POSTGRES_PASSWORD: 'postgres-password',
  RABBITMQ_DEFAULT_PASS: 'rabbitmq-password',
};
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
  profiles?: string[];
  volumes?: unknown[];
  secrets?: (string | { source: string })[];
  logging?: { driver: string; options?: Record<string, string> };
  deploy?: { resources?: { limits?: { cpus?: string; memory?: string } } };
}
interface Compose {
  services: Record<string, Service>;
  secrets?: Record<string, { environment?: string; file?: string }>;
}

/** Where the secret files of the containers are written for the test (Compose: /run/secrets). */
const secretsDir = mkdtempSync(join(tmpdir(), 'trawl-compose-secrets-'));
afterAll(() => rmSync(secretsDir, { recursive: true, force: true }));
let secretFiles = 0;

let parseYaml: (text: string, opts: { merge: boolean }) => unknown;
let knownVars: Set<string>;
/** Variables the IMAP retriever reads itself (TRAWL_IMAP_*; docs/configuration.md). */
let imapVars: Set<string>;
/** Variables the SMTP content filter reads itself (TRAWL_SMTP_*; docs/smtp-filter.md). */
let smtpVars: Set<string>;
/** TRAWL_GRAPH_* / TRAWL_GMAIL_* and the *_FILE form of their secrets. */
let apiVars: Map<string, Set<string>>;
let envExample: Record<string, string>;
const read = (f: string) => readFileSync(join(ROOT, f), 'utf8');
const prodText = read('docker-compose.yml');
const devText = read('docker-compose.dev.yml');
let prod: Compose;
let dev: Compose;

interface Reference {
  name: string;
  /** `:` before the operator: an empty value counts as unset. */
  colon: boolean;
  op: '' | '-' | '?' | '+';
  arg: string;
  start: number;
  end: number;
}

/**
 * The `${...}` expressions of a compose text, as Compose reads them: `${VAR}`, `${VAR:-default}`,
 * `${VAR-default}`, `${VAR:?message}`, `${VAR:+alternative}`, braces balanced (a JSON default);
 * `$$` is an escape for the container's shell.
 */
function scan(text: string): Reference[] {
  const out: Reference[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '$') continue;
    if (text[i + 1] === '$') {
      i++;
      continue;
    }
    if (text[i + 1] !== '{') continue;
    let depth = 1;
    let j = i + 2;
    for (; j < text.length && depth > 0; j++) {
      if (text[j] === '{') depth++;
      else if (text[j] === '}') depth--;
    }
    const inner = text.slice(i + 2, j - 1);
    const m = /^([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-?+])([\s\S]*))?$/.exec(inner);
    if (!m) throw new Error(`not a compose variable: \${${inner}}`);
    out.push({
      name: m[1] as string,
      colon: m[2] === ':',
      op: (m[3] ?? '') as Reference['op'],
      arg: m[4] ?? '',
      start: i,
      end: j,
    });
    i = j - 1;
  }
  return out;
}

/** ${VAR}, ${VAR:-default}, ${VAR:?message}, with the default of each. */
function references(text: string): { name: string; def: string | undefined }[] {
  return scan(text).map((r) => ({ name: r.name, def: r.op === '-' ? r.arg : undefined }));
}

/** A value as Compose hands it to the container, given the variables of .env / the shell. */
function interpolate(text: string, vars: Record<string, string | undefined>): string {
  let out = '';
  let at = 0;
  for (const r of scan(text)) {
    out += text.slice(at, r.start).replaceAll('$$', '$');
    const v = vars[r.name];
    const set = r.colon ? v !== undefined && v !== '' : v !== undefined;
    if (r.op === '') out += v ?? '';
    else if (r.op === '-') out += set ? v : interpolate(r.arg, vars);
    else if (r.op === '+') out += set ? interpolate(r.arg, vars) : '';
    else if (set) out += v;
    else throw new Error(`${r.name}: ${r.arg}`);
    at = r.end;
  }
  return out + text.slice(at).replaceAll('$$', '$');
}

/**
 * The environment a service's container gets: the overlay's entries over the base file's. A
 * `/run/secrets/<name>` path is replaced by a file holding what Compose would mount there: the
 * value of the secret's `environment` variable, when the service lists the secret.
 */
function containerEnv(
  service: string,
  vars: Record<string, string | undefined>,
  files: Compose[],
): Record<string, string> {
  const out: Record<string, string> = {};
  const mounted = new Map<string, string>();
  for (const f of files) {
    for (const s of f.services[service]?.secrets ?? []) {
      const name = typeof s === 'string' ? s : s.source;
      const from = f.secrets?.[name]?.environment;
      if (from !== undefined) mounted.set(name, vars[from] ?? '');
    }
  }
  for (const f of files) {
    for (const [k, v] of Object.entries(f.services[service]?.environment ?? {}))
      out[k] = interpolate(v === null ? '' : String(v), vars);
  }
  for (const [k, v] of Object.entries(out)) {
    const m = /^\/run\/secrets\/([a-z0-9_-]+)$/.exec(v);
    if (!m) continue;
    const content = mounted.get(m[1] as string);
    if (content === undefined) continue; // not mounted: the service cannot read it
    const file = join(secretsDir, `${secretFiles++}-${m[1]}`);
    writeFileSync(file, content);
    out[k] = file;
  }
  return out;
}

/** The configuration a service reads from that environment (no .env file: compose passes all). */
function configOf(env: Record<string, string>): AppConfig {
  return loadConfig({
    env,
    envFile: false,
    rootDir: ROOT,
    needs: { postgres: false, rabbitmq: false, redis: false, secretKey: false },
  });
}

/** What an operator may have in .env: nothing but the secrets; .env.example copied; their own. */
function operatorEnvs(): [string, Record<string, string | undefined>][] {
  return [
    ['only the required secrets', { ...REQUIRED }],
    ['.env.example copied to .env', { ...envExample, ...REQUIRED }],
    ['their own TRUSTED_HOSTS', { ...envExample, ...REQUIRED, TRUSTED_HOSTS: 'trawl.example.org' }],
  ];
}

beforeAll(async () => {
  ({ parse: parseYaml } = await importVia<{ parse: typeof parseYaml }>('packages/cli', 'yaml'));
  const config = await importVia<{
    ENV_VARIABLE_NAMES: readonly string[];
    parseDotenv: (t: string) => { values: Record<string, string> };
  }>('services/all-in-one', '@trawl/config');
  knownVars = new Set(config.ENV_VARIABLE_NAMES);
  const imap = await importVia<{ IMAP_ENV: Record<string, string> }>(
    'services/mail-orchestrator',
    '@trawl/retriever-imap',
  );
  imapVars = new Set(Object.keys(imap.IMAP_ENV));
  const smtp = await importVia<{ SMTP_ENV: Record<string, string> }>(
    'services/retriever-smtp',
    '@trawl/retriever-smtp',
  );
  smtpVars = new Set(Object.keys(smtp.SMTP_ENV));
  const graphMod = await importVia<{ GRAPH_ENV: object; GRAPH_SECRET_FILES: readonly string[] }>(
    'services/all-in-one',
    '@trawl/retriever-graph',
  );
  const gmailMod = await importVia<{ GMAIL_ENV: object; GMAIL_SECRET_FILES: readonly string[] }>(
    'services/all-in-one',
    '@trawl/retriever-gmail',
  );
  apiVars = new Map([
    [
      'retriever-graph',
      new Set([
        ...Object.keys(graphMod.GRAPH_ENV),
        ...graphMod.GRAPH_SECRET_FILES.map((n) => `${n}_FILE`),
      ]),
    ],
    [
      'retriever-gmail',
      new Set([
        ...Object.keys(gmailMod.GMAIL_ENV),
        ...gmailMod.GMAIL_SECRET_FILES.map((n) => `${n}_FILE`),
      ]),
    ],
  ]);
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
        for (const v of Object.keys(svc.environment ?? {})) {
          const own =
            SERVICE_OWN.has(v) ||
            (name === 'retriever-imap' && imapVars.has(v)) ||
            (name === 'retriever-smtp' && smtpVars.has(v)) ||
            (apiVars.get(name)?.has(v) ?? false);
          if (!knownVars.has(v) && !own) unknown.push(`${name}: ${v}`);
        }
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

  // docs/mail-ingestion.md: Redis holds the dedup marks; losing or evicting them analyses mail twice.
  it('run Redis persistent (append-only file) and never evicting', () => {
    const redis = prod.services.redis as Service;
    const command = (redis.command as string[]).join(' ');
    expect(command).toMatch(/--appendonly yes(\s|$)/);
    expect(redis.volumes?.some((v) => String(v).endsWith(':/data'))).toBe(true);
    for (const [what, vars] of operatorEnvs()) {
      const env = containerEnv('redis', vars, [prod]);
      expect(env.REDIS_MAXMEMORY_POLICY, what).toBe('noeviction');
      expect(
        configOf({ ...vars, APP_ENV: 'dev' } as Record<string, string>).redis.maxmemoryPolicy,
        what,
      ).toBe('noeviction');
    }
  });

  // Regression (issue 19): TRUSTED_HOSTS=localhost,127.0.0.1 while the mail orchestrator called
  // http://api-gateway:8001; every reported message was refused with 400 untrusted host.
  it('have the gateway trust the host name every other service calls it by', () => {
    for (const files of [[prod], [prod, dev]]) {
      for (const [what, vars] of operatorEnvs()) {
        const trusted = configOf(containerEnv('api-gateway', vars, files)).trustedHosts;
        for (const s of TRAWL_SERVICES) {
          const env = containerEnv(s, vars, files);
          if (env.TRAWL_GATEWAY_URL === undefined) continue;
          const host = new URL(configOf(env).gateway.url).hostname;
          expect(prod.services[host], `${s} calls ${host}: a service`).toBeDefined();
          expect(
            hostAllowed(host, trusted),
            `${what}: ${s} calls ${host}; trusted ${trusted}`,
          ).toBe(true);
        }
      }
    }
  });

  it('run the IMAP retriever and list it where the mail orchestrator finds its retrievers', () => {
    const svc = prod.services['retriever-imap'] as Service;
    expect(svc.command).toEqual(['retriever-imap']);
    for (const [what, vars] of operatorEnvs()) {
      const retrievers = configOf(containerEnv('mail-orchestrator', vars, [prod])).mailRetrievers;
      const port = configOf(containerEnv('retriever-imap', vars, [prod])).retrieverImap.port;
      const imap = Object.values(retrievers).filter(
        (r) => new URL(r.url).hostname === 'retriever-imap',
      );
      expect(imap, `${what}: TRAWL_MAIL_RETRIEVERS ${JSON.stringify(retrievers)}`).toHaveLength(1);
      expect(imap[0]?.enabled, what).toBe(true);
      expect(Number(new URL(imap[0]?.url ?? '').port), what).toBe(port);
      for (const r of Object.values(retrievers))
        expect(prod.services[new URL(r.url).hostname], r.url).toBeDefined();
    }
  });

  it('hand the secrets to the containers as Docker secret files, never as environment variables', () => {
    const fileVars = new Set(FILE_SECRET_VARIABLES.map((n) => `${n}_FILE`));
    for (const [name, svc] of Object.entries(prod.services)) {
      const env = svc.environment ?? {};
      // TRAWL_MAIL_RETRIEVERS is a secret only when its JSON carries credentials; the default is not.
      const plain = SECRET_VARIABLES.filter((v) => v !== 'TRAWL_MAIL_RETRIEVERS' && v in env);
      expect(plain, `${name} gets secrets in its environment`).toEqual([]);
      const listed = new Set(
        (svc.secrets ?? []).map((s) => (typeof s === 'string' ? s : s.source)),
      );
      for (const [k, v] of Object.entries(env)) {
        const m = /^\/run\/secrets\/(.+)$/.exec(String(v));
        if (!m) continue;
        // the Graph / Gmail retrievers' own secrets (TRAWL_GRAPH_CLIENT_SECRET_FILE...)
        const own = k.endsWith('_FILE') && (apiVars.get(name)?.has(k) ?? false);
        expect(
          fileVars.has(k) || own || k === 'POSTGRES_PASSWORD_FILE',
          `${name}: ${k} is read`,
        ).toBe(true);
        expect(listed.has(m[1] as string), `${name} mounts the secret ${m[1]}`).toBe(true);
        expect(prod.secrets?.[m[1] as string]?.environment, `secret ${m[1]}`).toBeDefined();
      }
    }
    // The services read them: the secrets of .env reach the configuration through the files.
    for (const [what, vars] of operatorEnvs()) {
      const c = configOf(containerEnv('api-gateway', vars, [prod]));
      expect(c.secretKey, what).toBe(REQUIRED.SECRET_KEY);
      expect(c.internalApiKey, what).toBe(REQUIRED.INTERNAL_API_KEY);
      expect(c.database.password, what).toBe(REQUIRED.POSTGRES_PASSWORD);
      expect(c.rabbitmq.password, what).toBe(REQUIRED.RABBITMQ_DEFAULT_PASS);
      expect(c.redis.password, what).toBeUndefined();
    }
    const withRedis = { ...REQUIRED, REDIS_PASSWORD: 'redis-pass', TRAWL_RETRIEVER_KEY: 'rk' };
    expect(configOf(containerEnv('analyzers', withRedis, [prod])).redis.password).toBe(
      'redis-pass',
    );
    expect(configOf(containerEnv('retriever-imap', withRedis, [prod])).retrieverKey).toBe('rk');
    // The servers read the same secrets.
    expect(((prod.services.redis as Service).command as string[]).join(' ')).toContain(
      '/run/secrets/redis_password',
    );
    expect(((prod.services.rabbitmq as Service).command as string[]).join(' ')).toContain(
      '/run/secrets/rabbitmq_password',
    );
  });

  it("rotate every container's logs and limit its resources", () => {
    for (const [name, svc] of Object.entries(prod.services)) {
      expect(svc.logging?.driver, `${name} logging`).toBe('json-file');
      expect(svc.logging?.options?.['max-size'], name).toBeDefined();
      expect(svc.logging?.options?.['max-file'], name).toBeDefined();
      expect(svc.deploy?.resources?.limits?.memory, `${name} memory limit`).toMatch(/^\d+[MG]$/);
      expect(svc.deploy?.resources?.limits?.cpus, `${name} cpu limit`).toMatch(/^\d+(\.\d+)?$/);
    }
  });

  it('offer a TLS profile: Caddy in front of the gateway, on its port, with a health check', () => {
    const caddy = prod.services.caddy as Service;
    expect(caddy.profiles).toEqual(['tls']);
    expect(caddy.depends_on?.['api-gateway']?.condition).toBe('service_healthy');
    const env = containerEnv('caddy', { ...REQUIRED }, [prod]);
    const gwPort = configOf(containerEnv('api-gateway', { ...REQUIRED }, [prod])).gateway.port;
    expect(env.TRAWL_UPSTREAM).toBe(`api-gateway:${gwPort}`);
    const caddyfile = read('docker/caddy/Caddyfile');
    expect(caddyfile).toContain('reverse_proxy {$TRAWL_UPSTREAM');
    expect(caddyfile).toContain('tls {$TRAWL_TLS');
    expect(caddy.volumes?.map(String)).toContain(
      './docker/caddy/Caddyfile:/etc/caddy/Caddyfile:ro',
    );
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
    const checked = new Map<string, { variable: string; def: number }>();
    for (const m of script.matchAll(/^\s*'?([a-z-]+)'?: process\.env\.([A-Z0-9_]+) \?\? '(\d+)'/gm))
      checked.set(m[1] as string, { variable: m[2] as string, def: Number(m[3]) });
    expect([...checked.keys()].sort()).toEqual(Object.keys(LISTENS_ON).sort());
    for (const [s, listens] of Object.entries(LISTENS_ON)) {
      const hc = checked.get(s) as { variable: string; def: number };
      // The code listens on this configuration value ...
      expect(read(listens.file), `${listens.file} listens on ${listens.expr}`).toContain(
        listens.expr,
      );
      // ... which the health check's variable sets, with the same default.
      const dev = { APP_ENV: 'dev' };
      expect(listens.port(configOf(dev)), `${s}: default port`).toBe(hc.def);
      expect(
        listens.port(configOf({ ...dev, [hc.variable]: '23456' })),
        `${s}: ${hc.variable}`,
      ).toBe(23456);
    }
    for (const s of TRAWL_SERVICES) {
      const svc = prod.services[s] as Service;
      expect(svc.environment?.TRAWL_SERVICE, s).toBe(s);
      expect(svc.command, s).toEqual([s]);
      expect(checked.has(s), `healthcheck.mjs knows ${s}`).toBe(true);
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

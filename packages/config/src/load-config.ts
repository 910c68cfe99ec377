import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { MailRetrievers, toProblems } from '@trawl/contracts';
import {
  APP_ENVS,
  type AppConfig,
  type ConfigNeeds,
  type ConnectionUrl,
  type DatabaseConfig,
  LOG_LEVEL_NAMES,
  type LoadConfigOptions,
  type LogLevel,
  type PinoLevel,
  type RabbitmqConfig,
  REDIS_MAXMEMORY_POLICIES,
  type RedisConfig,
  type TrustProxy,
} from './app-config.ts';
import { deepFreeze } from './deep-freeze.ts';
import {
  DEFAULTS as D,
  EMBEDDED_HOST_DEFAULT,
  FILE_SECRET_VARIABLES,
  SECRET_VARIABLES,
} from './defaults.ts';
import { parseDotenv } from './dotenv.ts';
import { EnvReader } from './env-reader.ts';
import { ConfigError, type ConfigProblem } from './errors.ts';
import { findRepoRoot } from './repo-root.ts';
import { buildAmqpUrl, buildPostgresUrl, buildRedisUrl } from './urls.ts';

const MIN_SECRET_KEY_BYTES = 32;
const PINO_LEVELS: Record<LogLevel, PinoLevel> = {
  debug: 'debug',
  info: 'info',
  warning: 'warn',
  error: 'error',
};

/**
 * Reads the configuration once: `opts.env` (default process.env) > `<rootDir>/.env` > defaults.
 * Throws ConfigError listing every problem (one per line, each naming its variable).
 */
export function loadConfig(opts: LoadConfigOptions = {}): AppConfig {
  const rootDir = resolve(opts.rootDir ?? findRepoRoot());
  const problems: ConfigProblem[] = [];

  const fileValues: Record<string, string> = {};
  // TRAWL_ENV_FILE (process environment only) names another .env file, or `none` for no file.
  const envFileVar = (opts.env ?? process.env).TRAWL_ENV_FILE;
  const envFile =
    opts.envFile !== undefined
      ? opts.envFile
      : envFileVar === 'none'
        ? false
        : envFileVar
          ? resolve(rootDir, envFileVar)
          : join(rootDir, '.env');
  if (envFile !== false) {
    const text = readOptional(envFile);
    if (text !== undefined) {
      const parsed = parseDotenv(text);
      Object.assign(fileValues, parsed.values);
      for (const line of parsed.invalidLines) {
        problems.push({ file: envFile, path: '', line, message: 'not a KEY=value line' });
      }
    }
  }
  const processEnv = opts.env ?? process.env;
  const merged: Record<string, string | undefined> = { ...fileValues };
  for (const [k, v] of Object.entries(processEnv)) if (v !== undefined) merged[k] = v;

  const fileProblems = readSecretFiles(merged, rootDir);
  const cfg = readAll(new EnvReader(merged).secret(...SECRET_VARIABLES), rootDir, opts.needs ?? {});
  problems.push(...fileProblems, ...cfg.problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(cfg.config);
}

function readOptional(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

function readAll(
  r: EnvReader,
  rootDir: string,
  needsIn: ConfigNeeds,
): { config: AppConfig; problems: ConfigProblem[] } {
  const needs = {
    postgres: needsIn.postgres ?? true,
    rabbitmq: needsIn.rabbitmq ?? true,
    redis: needsIn.redis ?? true,
    secretKey: needsIn.secretKey ?? true,
  };
  const before = r.problems.length;
  const appEnv = r.oneOf('APP_ENV', APP_ENVS, D.APP_ENV);
  // A misspelt APP_ENV is reported alone, not followed by every production requirement.
  const prod = appEnv === 'prod' && r.problems.length === before;
  const requireInProd = (name: string, why: string): void => {
    if (prod && !r.has(name)) r.problem(name, `must be set in production (APP_ENV=prod)${why}`);
  };
  requireInProd('APP_ENV', '');

  const logLevel = r.oneOf('LOG_LEVEL', LOG_LEVEL_NAMES, D.LOG_LEVEL, { warn: 'warning' });
  const tz = r.str('TZ', D.TZ);
  if (!isTimeZone(tz))
    r.problem('TZ', `must be an IANA time zone such as UTC or Europe/Paris${r.show('TZ', tz)}`);

  // Secrets.
  let secretKey = r.raw('SECRET_KEY');
  if (needs.secretKey) requireInProd('SECRET_KEY', ': it signs the access tokens');
  if (
    prod &&
    secretKey !== undefined &&
    Buffer.byteLength(secretKey, 'utf8') < MIN_SECRET_KEY_BYTES
  ) {
    r.problem('SECRET_KEY', `must be at least ${MIN_SECRET_KEY_BYTES} bytes long in production`);
  }
  const secretKeyGenerated = secretKey === undefined;
  secretKey ??= randomBytes(32).toString('hex');

  const database = readDatabase(r, needs.postgres, requireInProd);
  const redis = readRedis(r);
  const rabbitmq = readRabbitmq(r, needs.rabbitmq, requireInProd);

  // Gateway and service ports.
  const gatewayPort = r.port('API_GATEWAY_PORT', D.API_GATEWAY_PORT);
  const gatewayUrlU = r.url('TRAWL_GATEWAY_URL', ['http', 'https'], 'an http(s) URL');
  const gatewayUrl = stripSlash(gatewayUrlU?.href ?? `http://127.0.0.1:${gatewayPort}`);

  // Mail retrievers: a JSON object validated by the contracts schema.
  let mailRetrievers: MailRetrievers = {};
  const retrieversRaw = r.str('TRAWL_MAIL_RETRIEVERS', D.TRAWL_MAIL_RETRIEVERS);
  let retrieversJson: unknown;
  try {
    retrieversJson = JSON.parse(retrieversRaw);
  } catch {
    r.problem('TRAWL_MAIL_RETRIEVERS', 'must be a JSON object (it does not parse as JSON)');
  }
  if (retrieversJson !== undefined) {
    const parsed = MailRetrievers.safeParse(retrieversJson);
    if (parsed.success) mailRetrievers = parsed.data;
    else {
      for (const p of toProblems(parsed.error)) {
        r.problem('TRAWL_MAIL_RETRIEVERS', `${p.path === '' ? '' : `${p.path}: `}${p.message}`);
      }
    }
  }

  const brokerPrefix = r.str('TRAWL_BROKER_PREFIX', D.TRAWL_BROKER_PREFIX);
  if (!/^[A-Za-z0-9_.-]*$/.test(brokerPrefix)) {
    r.problem(
      'TRAWL_BROKER_PREFIX',
      `may hold only letters, digits, _ . -${r.show('TRAWL_BROKER_PREFIX', brokerPrefix)}`,
    );
  }

  const path = (name: string, def: string): string => {
    const v = r.str(name, def);
    return isAbsolute(v) ? v : resolve(rootDir, v);
  };
  const pos = { min: 1 };

  const config: AppConfig = {
    rootDir,
    appEnv,
    containerProjectName: r.str('CONTAINER_PROJECT_NAME', D.CONTAINER_PROJECT_NAME),
    logLevel,
    pinoLevel: PINO_LEVELS[logLevel],
    debug: r.bool('DEBUG', D.DEBUG),
    tz,
    secretKey,
    secretKeyGenerated,
    internalApiKey: r.raw('INTERNAL_API_KEY'),
    retrieverKey: r.raw('TRAWL_RETRIEVER_KEY'),
    trustedHosts: r.list('TRUSTED_HOSTS', D.TRUSTED_HOSTS),
    trustProxy: readTrustProxy(r),
    auth: {
      accessTokenExpireMinutes: r.int(
        'ACCESS_TOKEN_EXPIRE_MINUTES',
        D.ACCESS_TOKEN_EXPIRE_MINUTES,
        pos,
      ),
      refreshTokenExpireDays: r.int('REFRESH_TOKEN_EXPIRE_DAYS', D.REFRESH_TOKEN_EXPIRE_DAYS, pos),
      adminUser: r.raw('TRAWL_ADMIN_USER'),
      adminPassword: r.raw('TRAWL_ADMIN_PASSWORD'),
    },
    database,
    redis,
    rabbitmq,
    gateway: {
      host: r.str('TRAWL_HOST', D.TRAWL_HOST),
      embeddedHost: r.str('TRAWL_HOST', EMBEDDED_HOST_DEFAULT),
      port: gatewayPort,
      url: gatewayUrl,
      cpuWorkers: {
        size: r.int('TRAWL_GATEWAY_CPU_WORKERS', D.TRAWL_GATEWAY_CPU_WORKERS, { min: 0, max: 64 }),
        inlineMaxBytes: r.int(
          'TRAWL_GATEWAY_CPU_INLINE_MAX_BYTES',
          D.TRAWL_GATEWAY_CPU_INLINE_MAX_BYTES,
          { min: 0 },
        ),
        deadlineMs: r.int('TRAWL_GATEWAY_CPU_DEADLINE_MS', D.TRAWL_GATEWAY_CPU_DEADLINE_MS, pos),
      },
    },
    analyzersPort: r.port('TRAWL_ANALYZERS_PORT', D.TRAWL_ANALYZERS_PORT),
    analyzersHost: r.str('TRAWL_ANALYZERS_HOST', D.TRAWL_ANALYZERS_HOST),
    analyzersListenHost: r.str('TRAWL_ANALYZERS_LISTEN_HOST', D.TRAWL_ANALYZERS_LISTEN_HOST),
    orchestratorHost: r.str('TRAWL_ORCHESTRATOR_HOST', D.TRAWL_ORCHESTRATOR_HOST),
    orchestratorPort: r.port('TRAWL_ORCHESTRATOR_PORT', D.TRAWL_ORCHESTRATOR_PORT),
    builtinsInProcess: r.bool('TRAWL_BUILTINS_IN_PROCESS', D.TRAWL_BUILTINS_IN_PROCESS),
    analysisWorkers: readAnalysisWorkers(r),
    mailOrchestratorHost: r.str('TRAWL_MAIL_ORCHESTRATOR_HOST', D.TRAWL_MAIL_ORCHESTRATOR_HOST),
    mailOrchestratorPort: r.port('TRAWL_MAIL_ORCHESTRATOR_PORT', D.TRAWL_MAIL_ORCHESTRATOR_PORT),
    retrieverImap: {
      host: r.str('TRAWL_RETRIEVER_IMAP_HOST', D.TRAWL_RETRIEVER_IMAP_HOST),
      port: r.port('TRAWL_RETRIEVER_IMAP_PORT', D.TRAWL_RETRIEVER_IMAP_PORT),
    },
    retrieverSmtp: {
      host: r.str('TRAWL_RETRIEVER_SMTP_HOST', D.TRAWL_RETRIEVER_SMTP_HOST),
      port: r.port('TRAWL_RETRIEVER_SMTP_PORT', D.TRAWL_RETRIEVER_SMTP_PORT),
    },
    milter: {
      host: r.str('TRAWL_MILTER_HOST', D.TRAWL_MILTER_HOST),
      port: r.port('TRAWL_MILTER_PORT', D.TRAWL_MILTER_PORT),
      // at least Postfix's header_size_limit (100 KiB) and its body chunks (64 KiB)
      maxPacketBytes: r.int('TRAWL_MILTER_MAX_PACKET_BYTES', D.TRAWL_MILTER_MAX_PACKET_BYTES, {
        min: 65_536,
        max: 16 * 1024 * 1024,
      }),
      analysis: r.oneOf(
        'TRAWL_MILTER_ANALYSIS',
        ['inline', 'remote'] as const,
        D.TRAWL_MILTER_ANALYSIS,
      ),
      recordQueue: r.int('TRAWL_MILTER_RECORD_QUEUE', D.TRAWL_MILTER_RECORD_QUEUE, {
        min: 1,
        max: 1_000_000,
      }),
      retriever: r.str('TRAWL_MILTER_RETRIEVER', D.TRAWL_MILTER_RETRIEVER),
    },
    retrieverGraph: {
      host: r.str('TRAWL_RETRIEVER_GRAPH_HOST', D.TRAWL_RETRIEVER_GRAPH_HOST),
      port: r.port('TRAWL_RETRIEVER_GRAPH_PORT', D.TRAWL_RETRIEVER_GRAPH_PORT),
    },
    retrieverGmail: {
      host: r.str('TRAWL_RETRIEVER_GMAIL_HOST', D.TRAWL_RETRIEVER_GMAIL_HOST),
      port: r.port('TRAWL_RETRIEVER_GMAIL_PORT', D.TRAWL_RETRIEVER_GMAIL_PORT),
    },
    dataDir: path('TRAWL_DATA_DIR', D.TRAWL_DATA_DIR),
    mailRetrievers,
    configFile: path('TRAWL_CONFIG_FILE', D.TRAWL_CONFIG_FILE),
    workflowsFile: path('TRAWL_WORKFLOWS_FILE', D.TRAWL_WORKFLOWS_FILE),
    rateLimit: {
      enabled: r.bool('ENABLE_RATE_LIMITING', D.ENABLE_RATE_LIMITING),
      max: r.int('TRAWL_RATE_LIMIT_MAX', D.TRAWL_RATE_LIMIT_MAX, pos),
      windowSeconds: r.int(
        'TRAWL_RATE_LIMIT_WINDOW_SECONDS',
        D.TRAWL_RATE_LIMIT_WINDOW_SECONDS,
        pos,
      ),
    },
    limits: {
      jsonBodyBytes: r.int('TRAWL_MAX_JSON_BODY_BYTES', D.TRAWL_MAX_JSON_BODY_BYTES, pos),
      rawMessageBytes: r.int('TRAWL_MAX_RAW_MESSAGE_BYTES', D.TRAWL_MAX_RAW_MESSAGE_BYTES, pos),
      attachments: r.int('TRAWL_MAX_ATTACHMENTS', D.TRAWL_MAX_ATTACHMENTS, { min: 0 }),
      recipients: r.int('TRAWL_MAX_RECIPIENTS', D.TRAWL_MAX_RECIPIENTS, pos),
      subjectChars: r.int('TRAWL_MAX_SUBJECT_CHARS', D.TRAWL_MAX_SUBJECT_CHARS, pos),
      publicBodyBytes: r.int('TRAWL_MAX_PUBLIC_BODY_BYTES', D.TRAWL_MAX_PUBLIC_BODY_BYTES, {
        min: 1024,
        max: 1024 * 1024,
      }),
    },
    audit: {
      retentionDays: r.int('TRAWL_AUDIT_RETENTION_DAYS', D.TRAWL_AUDIT_RETENTION_DAYS, { min: 0 }),
      failureWindowSeconds: r.int(
        'TRAWL_AUDIT_FAILURE_WINDOW_SECONDS',
        D.TRAWL_AUDIT_FAILURE_WINDOW_SECONDS,
        { min: 1, max: 3600 },
      ),
    },
    retention: {
      mailDays: r.int('TRAWL_MAIL_RETENTION_DAYS', D.TRAWL_MAIL_RETENTION_DAYS, { min: 0 }),
      jobDays: r.int('TRAWL_JOB_RETENTION_DAYS', D.TRAWL_JOB_RETENTION_DAYS, { min: 0 }),
      senderHistoryDays: r.int(
        'TRAWL_SENDER_HISTORY_RETENTION_DAYS',
        D.TRAWL_SENDER_HISTORY_RETENTION_DAYS,
        { min: 0 },
      ),
      refreshTokenDays: r.int(
        'TRAWL_REFRESH_TOKEN_RETENTION_DAYS',
        D.TRAWL_REFRESH_TOKEN_RETENTION_DAYS,
        { min: 0 },
      ),
    },
    feedback: {
      ratePerHour: r.int('TRAWL_FEEDBACK_RATE_PER_HOUR', D.TRAWL_FEEDBACK_RATE_PER_HOUR, {
        min: 1,
      }),
      maxSharePercent: r.int(
        'TRAWL_FEEDBACK_MAX_SHARE_PERCENT',
        D.TRAWL_FEEDBACK_MAX_SHARE_PERCENT,
        {
          min: 1,
          max: 100,
        },
      ),
    },
    webhooks: {
      dispatcher: r.bool('TRAWL_WEBHOOK_DISPATCHER', D.TRAWL_WEBHOOK_DISPATCHER),
      pollIntervalMs: r.int('TRAWL_WEBHOOK_POLL_INTERVAL_MS', D.TRAWL_WEBHOOK_POLL_INTERVAL_MS, {
        min: 10,
      }),
      batchSize: r.int('TRAWL_WEBHOOK_BATCH_SIZE', D.TRAWL_WEBHOOK_BATCH_SIZE, {
        min: 1,
        max: 1000,
      }),
      timeoutMs: r.int('TRAWL_WEBHOOK_TIMEOUT_MS', D.TRAWL_WEBHOOK_TIMEOUT_MS, { min: 100 }),
      backoffBaseMs: r.int('TRAWL_WEBHOOK_BACKOFF_BASE_MS', D.TRAWL_WEBHOOK_BACKOFF_BASE_MS, {
        min: 1,
      }),
      backoffMaxMs: r.int('TRAWL_WEBHOOK_BACKOFF_MAX_MS', D.TRAWL_WEBHOOK_BACKOFF_MAX_MS, {
        min: 1,
      }),
      maxAgeMs: r.int('TRAWL_WEBHOOK_MAX_AGE_MS', D.TRAWL_WEBHOOK_MAX_AGE_MS, { min: 1000 }),
      disableAfterMs: r.int('TRAWL_WEBHOOK_DISABLE_AFTER_MS', D.TRAWL_WEBHOOK_DISABLE_AFTER_MS, {
        min: 1000,
      }),
    },
    notify: {
      smtpUrl: r.url('TRAWL_SMTP_URL', ['smtp', 'smtps'], 'an smtp:// or smtps:// URL')?.href,
      from: notifyFrom(r, r.has('TRAWL_SMTP_URL')),
      templateFile: path('TRAWL_NOTIFY_TEMPLATE_FILE', D.TRAWL_NOTIFY_TEMPLATE_FILE),
    },
    orchestrator: {
      prefetch: r.int('TRAWL_ORCHESTRATOR_PREFETCH', D.TRAWL_ORCHESTRATOR_PREFETCH, {
        min: 1,
        max: 65535,
      }),
      shutdownGraceMs: r.int(
        'TRAWL_ORCHESTRATOR_SHUTDOWN_GRACE_MS',
        D.TRAWL_ORCHESTRATOR_SHUTDOWN_GRACE_MS,
        { min: 0 },
      ),
      reaperIntervalMs: r.int('TRAWL_REAPER_INTERVAL_MS', D.TRAWL_REAPER_INTERVAL_MS, pos),
      jobGraceMs: r.int('TRAWL_JOB_GRACE_MS', D.TRAWL_JOB_GRACE_MS, { min: 0 }),
      queuedMaxMs: r.int('TRAWL_JOB_QUEUED_MAX_MS', D.TRAWL_JOB_QUEUED_MAX_MS, { min: 0 }),
    },
    brokerPrefix,
    metrics: r.bool('TRAWL_METRICS', D.TRAWL_METRICS),
    dev: {
      apiGatewaySrcMount: r.str('API_GATEWAY_SRC_MOUNT', D.API_GATEWAY_SRC_MOUNT),
      apiGatewayTestMount: r.str('API_GATEWAY_TEST_MOUNT', D.API_GATEWAY_TEST_MOUNT),
      analyzerOrchestratorSrcMount: r.str(
        'ANALYZER_ORCHESTRATOR_SRC_MOUNT',
        D.ANALYZER_ORCHESTRATOR_SRC_MOUNT,
      ),
      analyzerOrchestratorTestMount: r.str(
        'ANALYZER_ORCHESTRATOR_TEST_MOUNT',
        D.ANALYZER_ORCHESTRATOR_TEST_MOUNT,
      ),
      mailOrchestratorSrcMount: r.str('MAIL_ORCHESTRATOR_SRC_MOUNT', D.MAIL_ORCHESTRATOR_SRC_MOUNT),
      mailOrchestratorTestMount: r.str(
        'MAIL_ORCHESTRATOR_TEST_MOUNT',
        D.MAIL_ORCHESTRATOR_TEST_MOUNT,
      ),
      sharedMount: r.str('SHARED_MOUNT', D.SHARED_MOUNT),
      configMount: r.str('CONFIG_MOUNT', D.CONFIG_MOUNT),
      mountMode: r.oneOf('MOUNT_MODE', ['rw', 'ro'] as const, D.MOUNT_MODE),
      analyzerOrchestratorDebugPort: r.port(
        'ANALYZER_ORCHESTRATOR_DEBUG_PORT',
        D.ANALYZER_ORCHESTRATOR_DEBUG_PORT,
      ),
      mailOrchestratorDebugPort: r.port(
        'MAIL_ORCHESTRATOR_DEBUG_PORT',
        D.MAIL_ORCHESTRATOR_DEBUG_PORT,
      ),
      mailcatcherSmtpPort: r.port('MAILCATCHER_SMTP_PORT', D.MAILCATCHER_SMTP_PORT),
      mailcatcherWebPort: r.port('MAILCATCHER_WEB_PORT', D.MAILCATCHER_WEB_PORT),
      dbuiPort: r.port('DBUI_PORT', D.DBUI_PORT),
      hostUid: r.int('HOST_UID', D.HOST_UID, { min: 0 }),
      hostGid: r.int('HOST_GID', D.HOST_GID, { min: 0 }),
    },
    prod: {
      registryPort: r.port('REGISTRY_PORT', D.REGISTRY_PORT),
      ciRegistryImage: r.raw('CI_REGISTRY_IMAGE'),
      ciRegistry: r.raw('CI_REGISTRY'),
      version: r.str('VERSION', D.VERSION),
      baseImage: r.str('BASE_IMAGE', D.BASE_IMAGE),
    },
    ci: {
      vcsHost: r.raw('VCS_HOST'),
      vcsToken: r.raw('VCS_TOKEN') ?? r.raw('CI_JOB_TOKEN'),
      vcsGroup: r.raw('VCS_GROUP'),
    },
  };
  return { config, problems: r.problems };
}

type RequireInProd = (name: string, why: string) => void;

const TRUE_WORDS = new Set(['true', 'yes', 'on']);
const FALSE_WORDS = new Set(['false', 'no', 'off']);
/** Address ranges proxy-addr (Fastify's trustProxy) knows by name. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * TRUST_PROXY: unset or false: the client address is the TCP peer (X-Forwarded-For ignored);
 * true: every proxy is believed; a number: that many proxy hops in front; otherwise a
 * comma-separated list of proxy addresses or CIDR ranges (or loopback, linklocal, uniquelocal).
 */
function readTrustProxy(r: EnvReader): TrustProxy {
  const v = r.raw('TRUST_PROXY');
  if (v === undefined) return D.TRUST_PROXY;
  const t = v.trim().toLowerCase();
  if (TRUE_WORDS.has(t)) return true;
  if (FALSE_WORDS.has(t)) return false;
  if (/^\d+$/.test(t)) {
    const hops = Number(t);
    if (hops > 32)
      r.problem('TRUST_PROXY', `must be at most 32 proxy hops${r.show('TRUST_PROXY', v)}`);
    return hops === 0 ? false : Math.min(hops, 32);
  }
  const items = t
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const bad = items.filter((i) => !PROXY_RANGE_NAMES.has(i) && !isAddressOrRange(i));
  if (bad.length > 0 || items.length === 0) {
    r.problem(
      'TRUST_PROXY',
      `must be true, false, a number of proxy hops, or comma-separated proxy addresses / CIDR ranges${r.show('TRUST_PROXY', v)}`,
    );
    return false;
  }
  return items;
}

function isAddressOrRange(s: string): boolean {
  const [addr, bits, ...rest] = s.split('/');
  if (rest.length > 0 || addr === undefined) return false;
  const family = isIP(addr);
  if (family === 0) return false;
  if (bits === undefined) return true;
  if (!/^\d+$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

/**
 * The variable that names each server by its URL (`DATABASE_URL`, …), the schemes it may have and
 * the port of a URL that names none. Without it, the server is given by its parts: `<prefix>_HOST`,
 * `<prefix>_PORT` and the others its reader reads.
 */
const SERVER_URLS = {
  POSTGRES: { name: 'DATABASE_URL', schemes: ['postgres', 'postgresql'], port: () => 5432 },
  REDIS: { name: 'REDIS_URL', schemes: ['redis', 'rediss'], port: () => 6379 },
  RABBITMQ: {
    name: 'RABBITMQ_URL',
    schemes: ['amqp', 'amqps'],
    port: (u: URL) => (u.protocol === 'amqps:' ? 5671 : 5672),
  },
} as const;

/** How to read one server's parts besides host and port. */
interface ServerParts<P extends object> {
  /** Required in production when the service needs this server and no URL variable is set. */
  requiredInProd: readonly string[];
  /** From their own variables (read after host and port). */
  readParts(): P;
  /** As the URL variable gives them. */
  fromUrl(u: URL, parts: P): P;
  /** The URL made of the parts (no URL variable). */
  build(server: P & { host: string; port: number }): string;
}

function readServer<P extends object>(
  r: EnvReader,
  prefix: keyof typeof SERVER_URLS,
  needed: boolean,
  requireInProd: RequireInProd,
  src: ServerParts<P>,
): P & ConnectionUrl & { host: string; port: number } {
  const host = r.str(`${prefix}_HOST`, D[`${prefix}_HOST`]);
  const port = r.port(`${prefix}_PORT`, D[`${prefix}_PORT`]);
  const parts = src.readParts();
  const url = SERVER_URLS[prefix];
  const explicit = r.has(url.name);
  if (explicit) {
    const schemes = url.schemes.map((s) => `${s}://`).join(' or ');
    const article = /^[aeiou]/.test(url.schemes[0]) ? 'an' : 'a';
    const u = r.url(url.name, url.schemes, `${article} ${schemes} URL`);
    if (!u) return { url: '', explicit, host, port, ...parts };
    const urlPort = u.port === '' ? url.port(u) : Number(u.port);
    return { url: u.href, explicit, host: u.hostname, port: urlPort, ...src.fromUrl(u, parts) };
  }
  if (needed) {
    const why = ` (or set ${url.name})`;
    for (const name of src.requiredInProd) requireInProd(name, why);
  }
  return { url: src.build({ host, port, ...parts }), explicit, host, port, ...parts };
}

function readDatabase(r: EnvReader, needed: boolean, requireInProd: RequireInProd): DatabaseConfig {
  return readServer(r, 'POSTGRES', needed, requireInProd, {
    requiredInProd: ['POSTGRES_DB', 'POSTGRES_USER', 'POSTGRES_PASSWORD'],
    readParts: () => ({
      db: r.str('POSTGRES_DB', D.POSTGRES_DB),
      user: r.str('POSTGRES_USER', D.POSTGRES_USER),
      password: r.str('POSTGRES_PASSWORD', D.POSTGRES_PASSWORD),
    }),
    // An empty database name is the user's (as libpq has it).
    fromUrl: (u, parts) => ({
      db: safeDecode(u.pathname.replace(/^\//, '')) || parts.user,
      user: safeDecode(u.username),
      password: safeDecode(u.password),
    }),
    build: buildPostgresUrl,
  });
}

function readRedis(r: EnvReader): RedisConfig {
  const readParts = () => {
    const password = r.raw('REDIS_PASSWORD');
    const maxmemory = r.str('REDIS_MAXMEMORY', D.REDIS_MAXMEMORY);
    if (!/^\d+\s*(b|k|kb|m|mb|g|gb)?$/i.test(maxmemory)) {
      r.problem(
        'REDIS_MAXMEMORY',
        `must be a size such as 256mb or 1gb${r.show('REDIS_MAXMEMORY', maxmemory)}`,
      );
    }
    const maxmemoryPolicy = r.oneOf(
      'REDIS_MAXMEMORY_POLICY',
      REDIS_MAXMEMORY_POLICIES,
      D.REDIS_MAXMEMORY_POLICY,
    );
    return { password, maxmemory, maxmemoryPolicy };
  };
  // Redis has no variable production requires: `needed` does not matter.
  return readServer(r, 'REDIS', false, () => {}, {
    requiredInProd: [],
    readParts,
    fromUrl: (u, parts) => ({
      ...parts,
      password: u.password === '' ? undefined : safeDecode(u.password),
    }),
    build: buildRedisUrl,
  });
}

function readRabbitmq(r: EnvReader, needed: boolean, requireInProd: RequireInProd): RabbitmqConfig {
  return readServer(r, 'RABBITMQ', needed, requireInProd, {
    requiredInProd: ['RABBITMQ_DEFAULT_USER', 'RABBITMQ_DEFAULT_PASS'],
    readParts: () => ({
      mgmtPort: r.port('RABBITMQ_MGMT_PORT', D.RABBITMQ_MGMT_PORT),
      user: r.str('RABBITMQ_DEFAULT_USER', D.RABBITMQ_DEFAULT_USER),
      password: r.str('RABBITMQ_DEFAULT_PASS', D.RABBITMQ_DEFAULT_PASS),
      vhost: r.str('RABBITMQ_VHOST', D.RABBITMQ_VHOST),
    }),
    // The management port is not in the URL; guest and / are what amqplib assumes.
    fromUrl: (u, parts) => ({
      mgmtPort: parts.mgmtPort,
      user: u.username === '' ? 'guest' : safeDecode(u.username),
      password: u.password === '' ? 'guest' : safeDecode(u.password),
      vhost: u.pathname === '' ? '/' : safeDecode(u.pathname.slice(1)),
    }),
    build: buildAmqpUrl,
  });
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function stripSlash(s: string): string {
  return s.endsWith('/') ? s.slice(0, -1) : s;
}

function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/**
 * TRAWL_ANALYSIS_WORKERS: `auto` (one per core), a count from 0 (main thread) to 256, or unset: the
 * mode's default (undefined here; see AppConfig.analysisWorkers).
 */
function readAnalysisWorkers(r: EnvReader): number | undefined {
  const v = r.str('TRAWL_ANALYSIS_WORKERS', D.TRAWL_ANALYSIS_WORKERS).trim().toLowerCase();
  if (v === '') return undefined;
  if (v === 'auto') return availableParallelism();
  if (!/^\d+$/.test(v)) {
    r.problem(
      'TRAWL_ANALYSIS_WORKERS',
      `must be auto or a number of worker threads from 0 to 256${r.show('TRAWL_ANALYSIS_WORKERS', v)}`,
    );
    return availableParallelism();
  }
  return r.int('TRAWL_ANALYSIS_WORKERS', availableParallelism(), { min: 0, max: 256 });
}

/**
 * Secrets given as files: for each of FILE_SECRET_VARIABLES, `NAME_FILE` names a file (Docker and
 * Kubernetes secrets; a relative path is resolved against the root; one trailing newline dropped)
 * whose content becomes NAME in `env`, before anything reads it; an empty file counts as unset,
 * like an empty variable. Both set, or a file that cannot be read, is a problem of `NAME_FILE`; a
 * message never quotes the secret.
 */
function readSecretFiles(
  env: Record<string, string | undefined>,
  rootDir: string,
): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const problem = (variable: string, message: string) =>
    problems.push({ variable, path: `/${variable}`, message });
  for (const name of FILE_SECRET_VARIABLES) {
    const fileVar = `${name}_FILE`;
    const file = env[fileVar];
    if (file === undefined || file === '') continue;
    if (env[name] !== undefined && env[name] !== '') {
      problem(fileVar, `set ${name} or ${fileVar}, not both`);
      continue;
    }
    try {
      const text = readFileSync(isAbsolute(file) ? file : resolve(rootDir, file), 'utf8');
      const v = text.replace(/\r?\n$/, '');
      // An empty file counts as unset, like an empty variable (an optional secret left empty).
      if (v.length > 0) env[name] = v;
    } catch (e) {
      problem(fileVar, `cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  return problems;
}

/** TRAWL_NOTIFY_FROM: a plain address (`trawl@example.org`) or `Name <address>`. */
function notifyFrom(r: EnvReader, required: boolean): string | undefined {
  const v = r.str('TRAWL_NOTIFY_FROM')?.trim();
  if (v === undefined || v === '') {
    if (required) r.problem('TRAWL_NOTIFY_FROM', 'is required with TRAWL_SMTP_URL');
    return undefined;
  }
  const lt = v.lastIndexOf('<');
  const address = lt >= 0 && v.endsWith('>') ? v.slice(lt + 1, -1) : v;
  const at = address.indexOf('@');
  if (at < 1 || at === address.length - 1 || /[\s<>,;"]/.test(address) || /[\r\n]/.test(v)) {
    r.problem(
      'TRAWL_NOTIFY_FROM',
      `must be an address or Name <address>${r.show('TRAWL_NOTIFY_FROM', v)}`,
    );
    return undefined;
  }
  return v;
}

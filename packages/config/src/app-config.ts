import type { MailRetrievers } from '@trawl/contracts';

/** The environments an installation runs as (APP_ENV). */
export const APP_ENVS = ['prod', 'dev', 'test'] as const;
/** One of APP_ENVS. */
export type AppEnv = (typeof APP_ENVS)[number];

/** The log levels the configuration accepts (LOG_LEVEL). */
export const LOG_LEVEL_NAMES = ['debug', 'info', 'warning', 'error'] as const;
/** One of LOG_LEVEL_NAMES. */
export type LogLevel = (typeof LOG_LEVEL_NAMES)[number];
/** The same level as pino spells it. */
export type PinoLevel = 'debug' | 'info' | 'warn' | 'error';

/** Redis `maxmemory-policy` values the configuration accepts. */
export const REDIS_MAXMEMORY_POLICIES = [
  'noeviction',
  'allkeys-lru',
  'allkeys-lfu',
  'allkeys-random',
  'volatile-lru',
  'volatile-lfu',
  'volatile-random',
  'volatile-ttl',
] as const;
/** One of REDIS_MAXMEMORY_POLICIES. */
export type RedisMaxmemoryPolicy = (typeof REDIS_MAXMEMORY_POLICIES)[number];

/**
 * Which proxies in front of the gateway are believed about the client address (X-Forwarded-For,
 * X-Forwarded-Proto, X-Forwarded-Host): none (false), every one (true), the nearest N hops, or
 * the proxies at these addresses / CIDR ranges (`loopback`, `linklocal`, `uniquelocal` too).
 */
export type TrustProxy = boolean | number | string[];

/** A connection URL and whether the user gave it (explicit) or it was built from its parts. */
export interface ConnectionUrl {
  url: string;
  /** True when the URL variable itself was set; embedded mode uses real servers only then. */
  explicit: boolean;
}

/** PostgreSQL connection settings (DATABASE_URL or its parts). */
export interface DatabaseConfig extends ConnectionUrl {
  host: string;
  port: number;
  db: string;
  user: string;
  password: string;
}

/** Redis connection settings (REDIS_URL or its parts). */
export interface RedisConfig extends ConnectionUrl {
  host: string;
  port: number;
  /** Undefined: no authentication. */
  password: string | undefined;
  maxmemory: string;
  maxmemoryPolicy: RedisMaxmemoryPolicy;
}

/** RabbitMQ connection settings (RABBITMQ_URL or its parts). */
export interface RabbitmqConfig extends ConnectionUrl {
  host: string;
  port: number;
  mgmtPort: number;
  user: string;
  password: string;
  vhost: string;
}

/** The whole runtime configuration, deep-frozen. Units are in the names. */
/**
 * How the webhook dispatcher (@trawl/platform's createWebhookDispatcher) delivers: the
 * TRAWL_WEBHOOK_* variables set all but `logRetentionMs`.
 */
export interface WebhookSettings {
  /** Sleep between claims when nothing was due. */
  pollIntervalMs: number;
  /** Deliveries claimed (and sent concurrently) at a time. */
  batchSize: number;
  /** One attempt's timeout. */
  timeoutMs: number;
  /** Full-jitter exponential backoff: the nth retry waits a random time in [0, min(max, base·2^(n−1))]. */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** A delivery still failing this long after its event is given up (24 h). */
  maxAgeMs: number;
  /** An endpoint failing (no success) for this long is disabled, with an audit entry (24 h). */
  disableAfterMs: number;
  /** Events (with their delivery log) older than this are purged, hourly, once delivered or given up. */
  logRetentionMs: number;
}

/** The whole validated configuration of an installation, read once at start (frozen). */
export interface AppConfig {
  /** Repository / project root: relative paths are resolved against it. */
  rootDir: string;
  appEnv: AppEnv;
  containerProjectName: string;
  logLevel: LogLevel;
  pinoLevel: PinoLevel;
  debug: boolean;
  tz: string;
  /** Signs tokens. Outside prod, a random per-process key when unset (see secretKeyGenerated). */
  secretKey: string;
  secretKeyGenerated: boolean;
  /**
   * INTERNAL_API_KEY: the platform key. Held by the gateway and the orchestrators only, which
   * derive every party's own credential from it (docs/security.md); never given to a plugin or
   * a retriever.
   */
  internalApiKey: string | undefined;
  /**
   * TRAWL_RETRIEVER_KEY (or the file named by TRAWL_RETRIEVER_KEY_FILE): a retriever's own
   * credential (`trawl credentials retriever <name>`), checked on its /internal/* routes.
   */
  retrieverKey: string | undefined;
  trustedHosts: string[];
  /** TRUST_PROXY: passed to Fastify's trustProxy by the gateway (false when unset). */
  trustProxy: TrustProxy;
  auth: {
    accessTokenExpireMinutes: number;
    refreshTokenExpireDays: number;
    adminUser: string | undefined;
    adminPassword: string | undefined;
  };
  database: DatabaseConfig;
  redis: RedisConfig;
  rabbitmq: RabbitmqConfig;
  gateway: {
    /** TRAWL_HOST: where the gateway listens (default 127.0.0.1; the image sets 0.0.0.0). */
    host: string;
    /** TRAWL_HOST as `pnpm start` uses it: default 127.0.0.1, this machine only. */
    embeddedHost: string;
    port: number;
    url: string;
    /**
     * The gateway's CPU pool (issue 15): raw messages over `inlineMaxBytes` are parsed, and stored
     * HTML bodies over it sanitized, in `size` worker threads (0: on the HTTP thread); a task still
     * running at `deadlineMs` has its worker terminated and replaced (TRAWL_GATEWAY_CPU_*).
     */
    cpuWorkers: { size: number; inlineMaxBytes: number; deadlineMs: number };
  };
  analyzersPort: number;
  /** Host the orchestrator calls the built-in analyzers service on (scale-out mode). */
  analyzersHost: string;
  /** Where the analyzers service listens (TRAWL_ANALYZERS_LISTEN_HOST, default 127.0.0.1). */
  analyzersListenHost: string;
  /** Where the orchestrator's /health and /metrics listen (TRAWL_ORCHESTRATOR_HOST, 127.0.0.1). */
  orchestratorHost: string;
  /** Port of the orchestrator's /health and /metrics. */
  orchestratorPort: number;
  /**
   * Scale-out orchestrators run the built-in analyzers and providers in their own process (no HTTP
   * hop; ADR 002). False: they call the analyzers service at analyzersHost:analyzersPort.
   */
  builtinsInProcess: boolean;
  /**
   * Worker threads that run the built-in offline analyzers of an orchestrator or of embedded mode
   * (TRAWL_ANALYSIS_WORKERS: `auto` = the machine's cores; 0 = on the main thread). A call still
   * running at its deadline has its worker terminated and replaced. Undefined (unset): the mode's
   * default, the cores in embedded mode (one process: the pool uses the second core); in a
   * scale-out orchestrator one worker for the large messages only (moving every message to a
   * worker cost more than it gave there: the gateway, PostgreSQL and RabbitMQ already use the
   * other cores; docs/benchmarks.md, 2026-11-27); 0 in the analyzers service.
   */
  analysisWorkers: number | undefined;
  /** Where the mail orchestrator listens (TRAWL_MAIL_ORCHESTRATOR_HOST, default 127.0.0.1). */
  mailOrchestratorHost: string;
  mailOrchestratorPort: number;
  /** Where the IMAP retriever serves the retriever protocol (TRAWL_RETRIEVER_IMAP_HOST / _PORT). */
  retrieverImap: { host: string; port: number };
  /** Where the SMTP content filter serves the retriever protocol (TRAWL_RETRIEVER_SMTP_HOST / _PORT). */
  retrieverSmtp: { host: string; port: number };
  /**
   * Where the SMTP filter listens for Postfix's milter connections with TRAWL_SMTP_MODE=milter
   * (TRAWL_MILTER_HOST / _PORT), and the largest milter packet it reads
   * (TRAWL_MILTER_MAX_PACKET_BYTES; a larger one closes the connection: Postfix tempfails).
   * `analysis` (TRAWL_MILTER_ANALYSIS): `inline` analyses in the milter's own process and records
   * the job after answering (ADR 013 section 5; it then needs PostgreSQL and RabbitMQ), `remote`
   * pushes each message to the mail orchestrator and waits for the verdict. `recordQueue`
   * (TRAWL_MILTER_RECORD_QUEUE): analysed jobs waiting to be recorded at most; past it new mail is
   * answered 451. `retriever` (TRAWL_MILTER_RETRIEVER): the name its jobs are recorded under
   * (`origin.retriever`, submitted by `retriever:<name>`), its name in TRAWL_MAIL_RETRIEVERS.
   */
  milter: {
    host: string;
    port: number;
    maxPacketBytes: number;
    analysis: 'inline' | 'remote';
    recordQueue: number;
    retriever: string;
  };
  /** Where the Microsoft Graph retriever serves the retriever protocol (TRAWL_RETRIEVER_GRAPH_HOST / _PORT). */
  retrieverGraph: { host: string; port: number };
  /** Where the Gmail API retriever serves the retriever protocol (TRAWL_RETRIEVER_GMAIL_HOST / _PORT). */
  retrieverGmail: { host: string; port: number };
  /** Absolute; embedded mode keeps PGlite data here. */
  dataDir: string;
  mailRetrievers: MailRetrievers;
  /** Absolute path of service.yaml (see loadServiceFiles for the fallback). */
  configFile: string;
  /** Absolute path of workflows.yaml. */
  workflowsFile: string;
  rateLimit: { enabled: boolean; max: number; windowSeconds: number };
  limits: {
    jsonBodyBytes: number;
    rawMessageBytes: number;
    attachments: number;
    recipients: number;
    subjectChars: number;
    /**
     * Largest body of a route that answers without credentials (the token endpoints). Protected
     * routes read no body before the credentials are checked.
     */
    publicBodyBytes: number;
  };
  audit: {
    /** Audit rows older than this are purged by the gateway (0: kept for ever). */
    retentionDays: number;
    /** Failed logins of one source are written as one row per window of this length. */
    failureWindowSeconds: number;
  };
  /**
   * Retention purge, run by the analyzer orchestrator's reaper (one replica at a time); each in
   * days, 0: kept for ever.
   */
  retention: {
    /** A finished job's message body is replaced by a stub (verdict and evidence stay). */
    mailDays: number;
    /** Finished jobs (with their search terms) are deleted. */
    jobDays: number;
    /** Sender history rows not seen for this long are deleted. */
    senderHistoryDays: number;
    /** Refresh tokens expired for this long are deleted. */
    refreshTokenDays: number;
  };
  /**
   * Webhook delivery (issue 17, docs/feedback-and-webhooks.md): the dispatcher loop every gateway
   * and embedded mode run.
   */
  webhooks: {
    /** Run the dispatcher in this process (TRAWL_WEBHOOK_DISPATCHER, default true). */
    dispatcher: boolean;
  } & Omit<WebhookSettings, 'logRetentionMs'>;
  /**
   * Bounded feedback (issue 28, docs/feedback-and-webhooks.md "Bounded feedback"): how much one
   * user may teach the classifier.
   */
  feedback: {
    /** Feedback requests one user may make per hour, across replicas (then 429). */
    ratePerHour: number;
    /** The most one user's labels may be of every document the classifier learnt, in percent. */
    maxSharePercent: number;
  };
  /**
   * Reporter notifications (issue 17, docs/feedback-and-webhooks.md): the analyzer orchestrator
   * answers each reporter of a reported message by email once its verdict is known. Off without
   * TRAWL_SMTP_URL.
   */
  notify: {
    /** smtp:// or smtps:// URL of the relay (credentials in it are a secret). */
    smtpUrl?: string | undefined;
    /** From address of the notifications (TRAWL_NOTIFY_FROM). */
    from?: string | undefined;
    /** The template file (absolute). */
    templateFile: string;
  };
  orchestrator: {
    prefetch: number;
    shutdownGraceMs: number;
    reaperIntervalMs: number;
    jobGraceMs: number;
    /** A job still `queued` this long after it was stored is failed by the reaper (0: never). */
    queuedMaxMs: number;
  };
  brokerPrefix: string;
  metrics: boolean;
  dev: {
    apiGatewaySrcMount: string;
    apiGatewayTestMount: string;
    analyzerOrchestratorSrcMount: string;
    analyzerOrchestratorTestMount: string;
    mailOrchestratorSrcMount: string;
    mailOrchestratorTestMount: string;
    sharedMount: string;
    configMount: string;
    mountMode: 'rw' | 'ro';
    analyzerOrchestratorDebugPort: number;
    mailOrchestratorDebugPort: number;
    mailcatcherSmtpPort: number;
    mailcatcherWebPort: number;
    dbuiPort: number;
    hostUid: number;
    hostGid: number;
  };
  prod: {
    registryPort: number;
    ciRegistryImage: string | undefined;
    ciRegistry: string | undefined;
    version: string;
    baseImage: string;
  };
  ci: {
    vcsHost: string | undefined;
    /** VCS_TOKEN, else CI_JOB_TOKEN. */
    vcsToken: string | undefined;
    vcsGroup: string | undefined;
  };
}

/** What the calling service uses: decides which variables are required in prod. */
export interface ConfigNeeds {
  postgres?: boolean;
  rabbitmq?: boolean;
  redis?: boolean;
  secretKey?: boolean;
}

/** Options of loadConfig: the environment and project root it reads. */
export interface LoadConfigOptions {
  /** Highest-precedence variables (default: process.env). */
  env?: Record<string, string | undefined>;
  /** Project root (default: findRepoRoot()). */
  rootDir?: string;
  /** The `.env` file to read (default `<rootDir>/.env`); false reads none. */
  envFile?: string | false;
  /** Default: everything needed. */
  needs?: ConfigNeeds;
}

import type { AppConfig } from '@trawl/config';
import type { EmailLimits } from '@trawl/contracts';
import type { CpuWorkOptions } from './cpu-work/cpu-work.ts';

/** The part of the application configuration the gateway uses (mapped from AppConfig in main.ts). */
export interface GatewayOptions {
  /** HS256 signing key of access tokens. */
  secretKey: string;
  /** Service-to-service key (X-Internal-API-Key); absent: internal calls are refused. */
  internalApiKey?: string | undefined;
  /** Host names accepted in the Host header; empty or containing '*': any host. */
  trustedHosts: readonly string[];
  accessTokenExpireMinutes: number;
  refreshTokenExpireDays: number;
  rateLimit: { enabled: boolean; max: number; windowSeconds: number };
  limits: EmailLimits & { jsonBodyBytes: number; rawMessageBytes: number };
  /** Feature flags reported by GET /health. */
  features?: Partial<{
    database_config: boolean;
    configuration_api: boolean;
    audit_logging: boolean;
  }>;
  /**
   * Trust X-Forwarded-For / X-Forwarded-Host from a proxy in front (Fastify trustProxy: true, a
   * number of hops, or proxy addresses / CIDR ranges). Off by default: the client is the TCP peer.
   * The login throttle and the rate limit key on the address this gives.
   */
  trustProxy?: boolean | number | string | string[];
  /** Seconds a verified access token stays in the in-process verification cache (0: off). */
  tokenCacheSeconds?: number;
  /** Failed logins for one (username, address) allowed before the delay kicks in. */
  loginFailuresFree?: number;
  /** Cap of the login delay / lockout in seconds. */
  loginLockoutMaxSeconds?: number;
  /** Serve GET /metrics (default true). */
  metrics?: boolean;
  /**
   * Largest body of a route that answers without credentials (default 64 KiB). Protected routes
   * read no body before the credentials are checked.
   */
  publicBodyBytes?: number;
  /** Audit log: retention in days (0: for ever; default 365) and the failed-login window (60 s). */
  audit?: { retentionDays: number; failureWindowSeconds: number };
  /** Seconds a user's access version stays cached (default 300). */
  accessVersionCacheSeconds?: number;
  /** Password hashes computed at once (default: half the cores, at least 1). */
  passwordHashConcurrency?: number;
  /**
   * Where raw-message parsing and the message view's HTML sanitizer run (issue 15): inputs larger
   * than `inlineMaxBytes` in `workers` worker threads cut at `deadlineMs` (default 2, 256 KiB,
   * 10 s; workers 0: all on the HTTP thread).
   */
  cpuWork?: Partial<CpuWorkOptions>;
  /**
   * Bounded feedback (issue 28): requests per user per hour (default 120) and one user's most
   * share of the classifier's training in percent (default 20).
   */
  feedback?: { ratePerHour: number; maxSharePercent: number };
}

/** Defaults for tests and embedded mode. */
export function defaultGatewayOptions(
  overrides: Partial<GatewayOptions> & { secretKey: string },
): GatewayOptions {
  return {
    trustedHosts: [],
    accessTokenExpireMinutes: 30,
    refreshTokenExpireDays: 7,
    rateLimit: { enabled: false, max: 100, windowSeconds: 60 },
    limits: {
      maxAttachments: 100,
      maxRecipients: 1000,
      maxSubjectChars: 998,
      maxAttachmentBytes: 25 * 1024 * 1024,
      jsonBodyBytes: 10 * 1024 * 1024,
      rawMessageBytes: 25 * 1024 * 1024,
    },
    ...overrides,
  };
}

/** Maps the application configuration to the gateway's options. */
export function gatewayOptionsFrom(
  cfg: Pick<
    AppConfig,
    | 'secretKey'
    | 'internalApiKey'
    | 'trustedHosts'
    | 'trustProxy'
    | 'rateLimit'
    | 'limits'
    | 'audit'
    | 'metrics'
  > &
    Partial<Pick<AppConfig, 'feedback'>> & {
      auth: Pick<AppConfig['auth'], 'accessTokenExpireMinutes' | 'refreshTokenExpireDays'>;
      /** Optional: callers that build a partial configuration get the CPU pool's defaults. */
      gateway?: Pick<AppConfig['gateway'], 'cpuWorkers'>;
    },
): GatewayOptions {
  const cpu = cfg.gateway?.cpuWorkers;
  return {
    secretKey: cfg.secretKey,
    internalApiKey: cfg.internalApiKey,
    trustedHosts: cfg.trustedHosts,
    trustProxy: typeof cfg.trustProxy === 'object' ? [...cfg.trustProxy] : cfg.trustProxy,
    accessTokenExpireMinutes: cfg.auth.accessTokenExpireMinutes,
    refreshTokenExpireDays: cfg.auth.refreshTokenExpireDays,
    rateLimit: { ...cfg.rateLimit },
    limits: {
      maxAttachments: cfg.limits.attachments,
      maxRecipients: cfg.limits.recipients,
      maxSubjectChars: cfg.limits.subjectChars,
      maxAttachmentBytes: cfg.limits.rawMessageBytes,
      jsonBodyBytes: cfg.limits.jsonBodyBytes,
      rawMessageBytes: cfg.limits.rawMessageBytes,
    },
    metrics: cfg.metrics,
    publicBodyBytes: cfg.limits.publicBodyBytes,
    audit: { ...cfg.audit },
    ...(cfg.feedback ? { feedback: { ...cfg.feedback } } : {}),
    ...(cpu
      ? {
          cpuWork: {
            workers: cpu.size,
            inlineMaxBytes: cpu.inlineMaxBytes,
            deadlineMs: cpu.deadlineMs,
          },
        }
      : {}),
  };
}

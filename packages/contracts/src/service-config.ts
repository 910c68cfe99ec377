import { z } from 'zod';

const HttpUrl = z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' });

/** Form A entry: `analyzers.<id>`. */
export const AnalyzerSettingsEntry = z.object({
  enabled: z.boolean().default(true),
  settings: z.record(z.string(), z.unknown()).default({}),
  url: HttpUrl.optional(),
});
export type AnalyzerSettingsEntry = z.output<typeof AnalyzerSettingsEntry>;

/** Form B entry: `plugins.analyzers.<id>` / `plugins.context_providers.<id>`. */
export const PluginEntry = z.object({
  enabled: z.boolean(),
  url: HttpUrl,
  settings: z.record(z.string(), z.unknown()).default({}),
  image: z.string().optional(),
  version: z.string().optional(),
  container_id: z.string().optional(),
  container_name: z.string().optional(),
  installed_at: z.string().optional(),
});
export type PluginEntry = z.output<typeof PluginEntry>;

/** The log levels service.yaml accepts. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warning', 'warn', 'error', 'fatal'] as const;

/** The confidence at which a verdict reaches each threat level. */
export const VerdictThresholds = z
  .object({
    low: z.number().min(0).max(1).default(0.3),
    medium: z.number().min(0).max(1).default(0.5),
    high: z.number().min(0).max(1).default(0.7),
    critical: z.number().min(0).max(1).default(0.9),
  })
  .refine((t) => t.low <= t.medium && t.medium <= t.high && t.high <= t.critical, {
    message: 'thresholds must be ordered low <= medium <= high <= critical',
  });
export type VerdictThresholds = z.output<typeof VerdictThresholds>;

/** service.yaml: platform, analyzer and workflow defaults, the analyzers and plugins. */
export const ServiceConfigFile = z.object({
  version: z.union([z.string(), z.number()]).transform(String).default('1'),
  platform: z
    .object({
      log_level: z
        .string()
        .transform((s) => s.toLowerCase())
        .pipe(z.enum(LOG_LEVELS))
        .default('info'),
      debug: z.boolean().default(false),
    })
    .default({ log_level: 'info', debug: false }),
  analyzer: z
    .object({
      timeout_ms: z.number().int().positive().default(30_000),
      min_confidence: z.number().min(0).max(1).default(0),
    })
    .default({ timeout_ms: 30_000, min_confidence: 0 }),
  workflow: z
    .object({
      default_workflow_id: z.string().min(1).default('default'),
      max_retries: z.number().int().nonnegative().default(3),
    })
    .default({ default_workflow_id: 'default', max_retries: 3 }),
  verdict: z
    .object({
      thresholds: VerdictThresholds.default({ low: 0.3, medium: 0.5, high: 0.7, critical: 0.9 }),
    })
    .default({ thresholds: { low: 0.3, medium: 0.5, high: 0.7, critical: 0.9 } }),
  analyzers: z.record(z.string(), AnalyzerSettingsEntry).default({}),
  plugins: z
    .object({
      analyzers: z.record(z.string(), PluginEntry).default({}),
      context_providers: z.record(z.string(), PluginEntry).default({}),
    })
    .default({ analyzers: {}, context_providers: {} }),
});
export type ServiceConfigFile = z.output<typeof ServiceConfigFile>;
/** service.yaml as written (defaults not yet applied). */
export type ServiceConfigFileInput = z.input<typeof ServiceConfigFile>;

/** GET /api/v1/config answer. */
export const ConfigView = z.object({
  version: z.string(),
  analyzer: z.object({ timeout_ms: z.number().int(), min_confidence: z.number() }),
  workflow: z.object({ default_workflow_id: z.string(), max_retries: z.number().int() }),
});
export type ConfigView = z.infer<typeof ConfigView>;

/** GET /api/v1/config/analyzers/{id} answer. */
export const AnalyzerConfigView = z.object({
  id: z.string(),
  enabled: z.boolean(),
  settings: z.record(z.string(), z.unknown()),
  url: z.string().optional(),
  version: z.string(),
});
export type AnalyzerConfigView = z.infer<typeof AnalyzerConfigView>;

/** POST /api/v1/config/reload answer. */
export const ReloadResponse = z.object({
  old_version: z.string(),
  new_version: z.string(),
  changed: z.object({
    platform: z.boolean(),
    workflows: z.boolean(),
    analyzers: z.array(z.string()),
  }),
});
export type ReloadResponse = z.infer<typeof ReloadResponse>;

/**
 * Whether service.yaml switches a plugin off: `enabled: false` in form A (`analyzers.<id>`) or in
 * form B (`plugins.analyzers.<id>` / `plugins.context_providers.<id>`). The invoker refuses such a
 * plugin and the engine skips it as not configured (issue 32).
 */
export function pluginDisabled(svc: ServiceConfigFile, id: string): boolean {
  return (
    svc.analyzers[id]?.enabled === false ||
    svc.plugins.analyzers[id]?.enabled === false ||
    svc.plugins.context_providers[id]?.enabled === false
  );
}

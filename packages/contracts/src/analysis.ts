import { z } from 'zod';
import { Email } from './email.ts';

export const Probability = z.number().min(0).max(1);

export const THREAT_LEVELS = ['none', 'low', 'medium', 'high', 'critical'] as const;
export const ThreatLevel = z.enum(THREAT_LEVELS);
export type ThreatLevel = z.infer<typeof ThreatLevel>;

export const RECOMMENDED_ACTIONS = ['allow', 'flag', 'review', 'quarantine'] as const;
export const RecommendedAction = z.enum(RECOMMENDED_ACTIONS);
export type RecommendedAction = z.infer<typeof RecommendedAction>;

/**
 * Indicator types raised by the built-in analyzers. Third-party analyzers may use other
 * snake_case labels; the list documents the vocabulary, it does not restrict it.
 */
export const KNOWN_INDICATOR_TYPES = [
  'auth_failure',
  'domain_spoofing',
  'display_name_spoofing',
  'reply_to_mismatch',
  'return_path_mismatch',
  'header_anomaly',
  'suspicious_url',
  'ip_url',
  'lookalike_domain',
  'homograph_domain',
  'link_text_mismatch',
  'url_shortener',
  'risky_tld',
  'credential_form',
  'script_url',
  'urgency_language',
  'threat_language',
  'reward_language',
  'credential_request',
  'payment_request',
  'brand_impersonation',
  'negative_sentiment',
  'dangerous_attachment',
  'double_extension',
  'macro_document',
  'disguised_executable',
  'archive_with_executable',
  'html_attachment',
  'rule_match',
  'llm_assessment',
  'vip_impersonation',
  'first_time_sender',
  'internal_domain_lookalike',
  'spam_language',
  'text_obfuscation',
  'suspicious_content',
  'suspicious_sender',
] as const;

export const Indicator = z.object({
  type: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[a-z0-9_.-]+$/, { message: 'must be a lower-case label such as domain_spoofing' }),
  value: z.string().max(2000),
  confidence: Probability,
});
export type Indicator = z.infer<typeof Indicator>;

export const AnalysisResult = z.object({
  is_phishing: z.boolean(),
  threat_level: ThreatLevel,
  confidence: Probability,
  summary: z.string().max(10_000),
  recommended_action: RecommendedAction,
  indicators: z.array(Indicator).max(1000),
});
export type AnalysisResult = z.infer<typeof AnalysisResult>;

/** What a plugin answers on POST /internal/analyze: summary and action may be left to the platform. */
export const AnalyzerAnswer = AnalysisResult.extend({
  summary: z.string().max(10_000).default(''),
  recommended_action: RecommendedAction.optional(),
  threat_level: ThreatLevel.optional(),
  analyzer_details: z.record(z.string(), z.unknown()).optional(),
});
export type AnalyzerAnswer = z.output<typeof AnalyzerAnswer>;
export type AnalyzerAnswerInput = z.input<typeof AnalyzerAnswer>;

export const ANALYZER_STATUSES = ['success', 'failed', 'skipped', 'timeout'] as const;
export const AnalyzerStatus = z.enum(ANALYZER_STATUSES);
export type AnalyzerStatus = z.infer<typeof AnalyzerStatus>;

/** One analyzer's result inside analysis_context (spec 2.4). */
export const AnalyzerResult = z.object({
  analyzer_id: z.string(),
  status: AnalyzerStatus,
  is_phishing: z.boolean(),
  confidence: Probability,
  threat_level: ThreatLevel,
  summary: z.string().optional(),
  indicators: z.array(Indicator),
  analyzer_details: z.record(z.string(), z.unknown()).default({}),
  attempts: z.number().int().nonnegative(),
  duration_ms: z.number().nonnegative(),
  cached: z.boolean().optional(),
});
export type AnalyzerResult = z.output<typeof AnalyzerResult>;

/** The aggregate of one stage, available to conditions as `stages.<name>.result`. */
export const StageAggregate = AnalysisResult.extend({
  probability: Probability,
});
export type StageAggregate = z.infer<typeof StageAggregate>;

/** analysis_context (spec 2.8): keyed by completed stage name. */
export const StageContext = z.object({
  providers: z.record(z.string(), z.unknown()),
  analyzers: z.record(z.string(), AnalyzerResult),
});
export type StageContext = z.infer<typeof StageContext>;
export const AnalysisContext = z.record(z.string(), StageContext);
export type AnalysisContext = z.infer<typeof AnalysisContext>;

/** POST /internal/enrich request. */
export const EnrichRequest = z.object({
  email: Email,
  stage: z.string(),
  workflow_id: z.string(),
});
export type EnrichRequest = z.output<typeof EnrichRequest>;

/** POST /internal/enrich answer. */
export const EnrichmentResult = z.object({
  provider_id: z.string().min(1),
  data: z.record(z.string(), z.unknown()),
  ttl_seconds: z.number().int().nonnegative().optional(),
});
export type EnrichmentResult = z.infer<typeof EnrichmentResult>;

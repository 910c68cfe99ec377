import { z } from 'zod';
import { Email } from './email.ts';
import { Evidence, EvidenceRef } from './evidence.ts';
import { coversKeys, fastRecord, isObjectLike, memberSchema, SLOW } from './fast-path.ts';

/** A probability or confidence, from 0 to 1. */
export const Probability = z.number().min(0).max(1);
/** A duration, or a time since a start, in milliseconds. */
export const Millis = z.number().nonnegative();

/** The threat levels of a verdict, lowest first. */
export const THREAT_LEVELS = ['none', 'low', 'medium', 'high', 'critical'] as const;
/** A verdict's threat level (THREAT_LEVELS). */
export const ThreatLevel = z.enum(THREAT_LEVELS);
export type ThreatLevel = z.infer<typeof ThreatLevel>;

/** What Trawl recommends doing with a message, mildest first. */
export const RECOMMENDED_ACTIONS = ['allow', 'flag', 'review', 'quarantine'] as const;
/** A verdict's recommended action (RECOMMENDED_ACTIONS). */
export const RecommendedAction = z.enum(RECOMMENDED_ACTIONS);
export type RecommendedAction = z.infer<typeof RecommendedAction>;

/** How an analyzer call ended in a job's trace. */
export const ANALYZER_STATUSES = ['success', 'failed', 'skipped', 'timeout'] as const;
/** An analyzer call's status (ANALYZER_STATUSES). */
export const AnalyzerStatus = z.enum(ANALYZER_STATUSES);
export type AnalyzerStatus = z.infer<typeof AnalyzerStatus>;

/** Indicator types about one of the message's links. */
export const URL_INDICATOR_TYPES = [
  'suspicious_url',
  'ip_url',
  'lookalike_domain',
  'homograph_domain',
  'link_text_mismatch',
  'url_shortener',
  'risky_tld',
  'credential_form',
  'script_url',
] as const;

/** Indicator types about one of the message's attachments. */
export const ATTACHMENT_INDICATOR_TYPES = [
  'dangerous_attachment',
  'double_extension',
  'macro_document',
  'disguised_executable',
  'archive_with_executable',
  'html_attachment',
  'pdf_attachment',
] as const;

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
  ...URL_INDICATOR_TYPES,
  'urgency_language',
  'threat_language',
  'reward_language',
  'credential_request',
  'payment_request',
  'brand_impersonation',
  'negative_sentiment',
  ...ATTACHMENT_INDICATOR_TYPES,
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

const INDICATOR_TYPE_PATTERN = /^[a-z0-9_.-]+$/;

/** The lengths of an analysis answer, defined once for the schemas and their fast paths. */
export const ANSWER_LIMITS = {
  indicatorTypeChars: 64,
  indicatorValueChars: 2000,
  indicators: 1000,
  summaryChars: 10_000,
} as const;

/** One thing an analyzer found: its type, value and confidence. */
export const Indicator = z.object({
  type: z.string().min(1).max(ANSWER_LIMITS.indicatorTypeChars).regex(INDICATOR_TYPE_PATTERN, {
    message: 'must be a lower-case label such as domain_spoofing',
  }),
  value: z.string().max(ANSWER_LIMITS.indicatorValueChars),
  confidence: Probability,
  /** The evidence item the indicator is about (set by the platform when the result is stored). */
  evidence: EvidenceRef.optional(),
});
export type Indicator = z.infer<typeof Indicator>;

/** A verdict: phishing or not, threat level, confidence, summary, action, indicators. */
export const AnalysisResult = z.object({
  is_phishing: z.boolean(),
  threat_level: ThreatLevel,
  confidence: Probability,
  summary: z.string().max(ANSWER_LIMITS.summaryChars),
  recommended_action: RecommendedAction,
  indicators: z.array(Indicator).max(ANSWER_LIMITS.indicators),
  /** What the message says and carries (issue 16); added by the platform to a job's result. */
  evidence: Evidence.optional(),
});
export type AnalysisResult = z.infer<typeof AnalysisResult>;

/** What a plugin answers on POST /internal/analyze: summary and action may be left to the platform. */
export const AnalyzerAnswer = AnalysisResult.extend({
  summary: z.string().max(ANSWER_LIMITS.summaryChars).default(''),
  recommended_action: RecommendedAction.optional(),
  threat_level: ThreatLevel.optional(),
  analyzer_details: z.record(z.string(), z.unknown()).optional(),
});
export type AnalyzerAnswer = z.output<typeof AnalyzerAnswer>;
/** An analyzer's answer as a plugin may write it (defaults not yet applied). */
export type AnalyzerAnswerInput = z.input<typeof AnalyzerAnswer>;

/**
 * The keys the fast paths below read and copy (or leave to zod when present), per object. A fast
 * path is used only while they equal its schema's keys (`coversKeys`): a key added to a schema
 * switches it off, and the contracts' tests fail, until the fast path handles that key.
 */
export const ANALYSIS_FAST_KEYS = {
  indicator: ['type', 'value', 'confidence', 'evidence'],
  analyzerAnswer: [
    'is_phishing',
    'threat_level',
    'confidence',
    'summary',
    'recommended_action',
    'indicators',
    'evidence',
    'analyzer_details',
  ],
  analyzerResult: [
    'analyzer_id',
    'status',
    'is_phishing',
    'confidence',
    'threat_level',
    'summary',
    'indicators',
    'analyzer_details',
    'attempts',
    'duration_ms',
    'cached',
  ],
  stageContext: ['providers', 'analyzers'],
} as const;

/** True when the fast path of safeParseAnalyzerAnswer handles every key of its schemas. */
export function analyzerAnswerFastPathCovers(schema: unknown = AnalyzerAnswer): boolean {
  return (
    coversKeys(schema, ANALYSIS_FAST_KEYS.analyzerAnswer) &&
    coversKeys(memberSchema(schema, 'indicators'), ANALYSIS_FAST_KEYS.indicator)
  );
}
const ANSWER_FAST = analyzerAnswerFastPathCovers();

const THREAT_LEVEL_SET: ReadonlySet<unknown> = new Set(THREAT_LEVELS);
const RECOMMENDED_ACTION_SET: ReadonlySet<unknown> = new Set(RECOMMENDED_ACTIONS);

function isProbability(v: unknown): v is number {
  return typeof v === 'number' && v >= 0 && v <= 1;
}

/** An optional enum field: absent gives undefined; present, it must be one of `allowed`. */
function optionalMember<T>(
  o: Record<PropertyKey, unknown>,
  key: string,
  allowed: ReadonlySet<unknown>,
): T | undefined | typeof SLOW {
  const v = o[key];
  if (v === undefined) return key in o ? SLOW : undefined;
  return allowed.has(v) ? (v as T) : SLOW;
}

function fastIndicators(v: unknown): Indicator[] | typeof SLOW {
  if (!Array.isArray(v) || v.length > ANSWER_LIMITS.indicators) return SLOW;
  const out: Indicator[] = [];
  for (let i = 0; i < v.length; i++) {
    const it: unknown = v[i];
    if (!isObjectLike(it)) return SLOW;
    const type = it.type;
    const value = it.value;
    const confidence = it.confidence;
    if (
      typeof type !== 'string' ||
      type.length < 1 ||
      type.length > ANSWER_LIMITS.indicatorTypeChars ||
      !INDICATOR_TYPE_PATTERN.test(type) ||
      typeof value !== 'string' ||
      value.length > ANSWER_LIMITS.indicatorValueChars ||
      !isProbability(confidence) ||
      !('type' in it && 'value' in it && 'confidence' in it) ||
      'evidence' in it
    ) {
      return SLOW;
    }
    out.push({ type, value, confidence });
  }
  return out;
}

/**
 * The fast path of `safeParseAnalyzerAnswer`: the parsed answer when `v` is plain data that the
 * schema accepts (built exactly as zod builds it: same keys, same order, unknown keys dropped), or
 * SLOW for anything else, valid or not.
 */
function fastAnalyzerAnswer(v: unknown): AnalyzerAnswer | typeof SLOW {
  if (!ANSWER_FAST || !isObjectLike(v)) return SLOW;
  const isPhishing = v.is_phishing;
  const confidence = v.confidence;
  if (typeof isPhishing !== 'boolean' || !isProbability(confidence)) return SLOW;
  if (!('is_phishing' in v && 'confidence' in v && 'indicators' in v)) return SLOW;
  if ('evidence' in v) return SLOW;
  const threat = optionalMember<ThreatLevel>(v, 'threat_level', THREAT_LEVEL_SET);
  const action = optionalMember<RecommendedAction>(v, 'recommended_action', RECOMMENDED_ACTION_SET);
  if (threat === SLOW || action === SLOW) return SLOW;
  let summary = v.summary;
  if (summary === undefined) summary = '';
  else if (typeof summary !== 'string' || summary.length > ANSWER_LIMITS.summaryChars) return SLOW;
  const indicators = fastIndicators(v.indicators);
  if (indicators === SLOW) return SLOW;
  const rawDetails = v.analyzer_details;
  let details: Record<string, unknown> | undefined;
  if (rawDetails === undefined) {
    if ('analyzer_details' in v) return SLOW;
  } else {
    const d = fastRecord(rawDetails);
    if (d === SLOW) return SLOW;
    details = d;
  }
  // the schema's key order: AnalysisResult's keys, then the ones `extend` added
  const out: AnalyzerAnswer = { is_phishing: isPhishing } as AnalyzerAnswer;
  if (threat !== undefined) out.threat_level = threat;
  out.confidence = confidence;
  out.summary = summary as string;
  if (action !== undefined) out.recommended_action = action;
  out.indicators = indicators;
  if (details !== undefined) out.analyzer_details = details;
  return out;
}

/**
 * Exactly `AnalyzerAnswer.safeParse(value)` (same accepted and refused inputs, same output), made
 * cheap for the common case: an answer of plain data is checked and copied by hand; anything else,
 * and every refusal, goes through zod, which stays the contract and writes the issues.
 */
export function safeParseAnalyzerAnswer(
  value: unknown,
): ReturnType<typeof AnalyzerAnswer.safeParse> {
  const data = fastAnalyzerAnswer(value);
  return data === SLOW ? AnalyzerAnswer.safeParse(value) : { success: true, data };
}

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
  duration_ms: Millis,
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
/** The results of the stages run so far, by stage name, given to the next analyzers. */
export const AnalysisContext = z.record(z.string(), StageContext);

/** True when the fast path of safeParseStageContext handles every key of its schemas. */
export function stageContextFastPathCovers(schema: unknown = StageContext): boolean {
  const result = memberSchema(schema, 'analyzers') as { valueType?: unknown } | undefined;
  return (
    coversKeys(schema, ANALYSIS_FAST_KEYS.stageContext) &&
    coversKeys(result?.valueType, ANALYSIS_FAST_KEYS.analyzerResult) &&
    coversKeys(memberSchema(result?.valueType, 'indicators'), ANALYSIS_FAST_KEYS.indicator)
  );
}
const STAGE_CONTEXT_FAST = stageContextFastPathCovers();

const ANALYZER_STATUS_SET: ReadonlySet<unknown> = new Set(ANALYZER_STATUSES);

/** An optional boolean or string key: absent is fine, a key holding undefined is left to zod. */
function optionalOf(o: Record<PropertyKey, unknown>, key: string, ok: (v: unknown) => boolean) {
  const v = o[key];
  if (v === undefined) return key in o ? SLOW : undefined;
  return ok(v) ? v : SLOW;
}

/** The fast path of `safeParseStageContext` for one analyzer's result (zod's output, by hand). */
function fastAnalyzerResult(v: unknown): AnalyzerResult | typeof SLOW {
  if (!isObjectLike(v)) return SLOW;
  const { analyzer_id: id, status, is_phishing: isPhishing, confidence } = v;
  const { threat_level: threat, attempts, duration_ms: duration } = v;
  if (
    typeof id !== 'string' ||
    !ANALYZER_STATUS_SET.has(status) ||
    typeof isPhishing !== 'boolean' ||
    !isProbability(confidence) ||
    !THREAT_LEVEL_SET.has(threat) ||
    !Number.isSafeInteger(attempts) ||
    (attempts as number) < 0 ||
    typeof duration !== 'number' ||
    !Number.isFinite(duration) ||
    duration < 0
  )
    return SLOW;
  const summary = optionalOf(v, 'summary', (x) => typeof x === 'string');
  const cached = optionalOf(v, 'cached', (x) => typeof x === 'boolean');
  if (summary === SLOW || cached === SLOW) return SLOW;
  const indicators = fastIndicators(v.indicators);
  if (indicators === SLOW) return SLOW;
  let details: Record<string, unknown> | typeof SLOW = {};
  if (v.analyzer_details !== undefined) details = fastRecord(v.analyzer_details);
  else if ('analyzer_details' in v) return SLOW;
  if (details === SLOW) return SLOW;
  const out = {
    analyzer_id: id,
    status,
    is_phishing: isPhishing,
    confidence,
    threat_level: threat,
  } as AnalyzerResult;
  if (summary !== undefined) out.summary = summary as string;
  out.indicators = indicators;
  out.analyzer_details = details;
  out.attempts = attempts as number;
  out.duration_ms = duration;
  if (cached !== undefined) out.cached = cached as boolean;
  return out;
}

function fastStageContext(v: unknown): StageContext | typeof SLOW {
  if (!STAGE_CONTEXT_FAST || !isObjectLike(v)) return SLOW;
  const providers = fastRecord(v.providers);
  const analyzers = fastRecord(v.analyzers);
  if (providers === SLOW || analyzers === SLOW) return SLOW;
  for (const id in analyzers) {
    const r = fastAnalyzerResult(analyzers[id]);
    if (r === SLOW) return SLOW;
    analyzers[id] = r;
  }
  return { providers, analyzers: analyzers as Record<string, AnalyzerResult> };
}

/**
 * Exactly `StageContext.safeParse(value)` (same accepted and refused inputs, same output), cheap
 * for a stage of plain data as the engine builds it; anything else goes through zod.
 */
export function safeParseStageContext(value: unknown): ReturnType<typeof StageContext.safeParse> {
  const data = fastStageContext(value);
  return data === SLOW ? StageContext.safeParse(value) : { success: true, data };
}

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
